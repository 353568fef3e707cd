package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/propagit/propagit/internal/api/workv1alpha1"
	"github.com/propagit/propagit/internal/parallel"
	"github.com/propagit/propagit/internal/render"
)

// writeSummary prints, per cluster that receives anything, its object
// count and the digest of its Work's manifests as the controller encodes
// them (workv1alpha1.Encoder, workv1alpha1.Digest), then one digest of the
// whole render: the work is proven without writing a file. Clusters are
// encoded and digested in parallel; an object shared by many clusters is
// encoded once.
func writeSummary(w io.Writer, works []render.Work) error {
	enc := workv1alpha1.NewEncoder()
	digests := make([]string, len(works))
	err := parallel.Each(len(works), func(i int) error {
		manifests, err := enc.EncodeManifests(works[i].Objects)
		if err != nil {
			return fmt.Errorf("cluster %s: %w", works[i].Cluster, err)
		}
		digests[i] = workv1alpha1.Digest(&workv1alpha1.Work{Spec: workv1alpha1.WorkSpec{Cluster: works[i].Cluster, Manifests: manifests}})
		return nil
	})
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tOBJECTS\tWORK DIGEST")
	all := sha256.New()
	total := 0
	for i, rw := range works {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", rw.Cluster, len(rw.Objects), digests[i])
		fmt.Fprintf(all, "%s %s\n", rw.Cluster, digests[i])
		total += len(rw.Objects)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%d objects for %d clusters; render digest %s\n", total, len(works), hex.EncodeToString(all.Sum(nil))[:16])
	return err
}
