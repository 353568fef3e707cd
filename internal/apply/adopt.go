package apply

// AnnotationAdopted marks an object that existed on the member before
// propagit took it over (conflictResolution: Overwrite on an object
// without this installation's managed label). It is kept on every later
// apply, and prune releases such an object instead of deleting it: what
// propagit did not create (a Namespace with everything in it) it never
// deletes. Karmada deletes adopted objects with their template.
const AnnotationAdopted = "propagit.io/adopted"

// stampAdopted marks the item's desired object adopted when its live copy
// is not this installation's (so applying it takes it over) or was adopted
// before. A template cannot clear the mark: it comes from the live copy.
func stampAdopted(it *item, owner string) {
	if it.live == nil {
		return
	}
	if ownedBy(it.live.GetLabels(), owner) && it.live.GetAnnotations()[AnnotationAdopted] != "true" {
		return
	}
	ann := it.obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationAdopted] = "true"
	it.obj.SetAnnotations(ann)
}
