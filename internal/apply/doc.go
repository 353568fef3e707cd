// Package apply makes one member cluster match the objects propagit rendered
// for it. The push controller and the pull agent share it; only the client
// they pass in differs.
//
// One Manager.Apply call is, in order:
//
//  1. plan: every desired object is checked for a kind, a version, a name
//     and duplicates, copied, and stamped with the managed label (when
//     render did not) and a digest of itself (workv1alpha1.AnnotationAppliedDigest); the
//     previous inventory says which objects propagit already owns, and
//     which of them are no longer desired. A SOPS-encrypted object is then
//     decrypted in memory with the keys given to UseKeys (its digest stays
//     that of the ciphertext); one that cannot be is failed, not applied.
//  2. namespaces: every namespace a desired object lives in that is not
//     itself desired is created when missing, without propagit's managed
//     label — propagit did not render it, so it is never pruned.
//  3. stages, as fluxcd/pkg/ssa's ApplyAllStaged splits them: CRDs,
//     Namespaces and ClusterRoles; then *Class kinds; then everything else.
//     After a definitions stage, what it created or changed is waited for
//     with kstatus, and new CRDs until the client can map their kinds. Each
//     stage first reads the live copies of its objects — one LIST per kind
//     and namespace with several objects, a GET otherwise, nothing in a
//     namespace this call created — then applies its objects concurrently
//     and independently: one invalid object or webhook denial fails alone.
//  4. per object: conflict resolution (Karmada §10.2) — an object on the
//     member without propagit.io/managed=true is refused unless its
//     work.karmada.io/conflict-resolution annotation is "overwrite", in
//     which case it is taken over (server-side apply forcing conflicts, so
//     field manager "propagit" owns the fields). Otherwise the object is
//     unchanged when every desired field, the digest included, is already on
//     the member (no request); applied when the digest differs; and, when
//     only a value differs (drift by someone else, or a value the apiserver
//     normalises), dry-run applied and compared with the live copy the way
//     ssa does, then applied only if they differ.
//  5. prune: every inventory entry no longer desired is deleted (ssa's
//     Delete, background propagation), but only when the live object still
//     carries propagit.io/managed=true.
//
// Rules that hold against a hostile commit (issue #25):
//
//   - Adoption: an object taken over (it existed without this
//     installation's managed label) is marked propagit.io/adopted on every
//     apply, and prune releases it (drops propagit's labels and
//     annotations) instead of deleting it. Karmada deletes it.
//   - Retention: a customization's Retain result may differ from the
//     desired object only by taking the live value of a field, or leaving
//     out one the member lacks (checkRetained); identity, kind, metadata
//     other than labels and annotations, and propagit's and Karmada's keys
//     stay the desired ones. Otherwise the object fails, nothing written.
//     Karmada applies whatever Retain returns.
//   - Scripts never read a Secret, a kind that may be decrypted
//     (Options.DecryptKinds) or an object applied decrypted (marked
//     propagit.io/decrypted): those get the default health, reflection
//     and retention. A script that fails on a live object is reported by
//     place and class only, never by its message.
//   - The apiserver's messages about a decrypted object, a Secret or a kind
//     that may be decrypted are not kept, only their reason code: they can
//     quote the values.
//
// So a first apply costs one request per object, an unchanged re-apply one
// LIST per kind and namespace, a changed object one request.
//
// The package returns data (Result) and never logs, emits events or writes
// status: the controller and the agent translate results into those.
package apply
