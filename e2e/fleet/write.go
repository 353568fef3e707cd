package fleet

import (
	"bytes"
	"embed"
	"fmt"
	"path"
	"strings"
	"text/template"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

var templates = template.Must(template.ParseFS(templateFS, "templates/*.tmpl"))

// writer executes named templates into files of one filesystem.
type writer struct {
	fs  filesys.FileSystem
	buf bytes.Buffer
}

func (w *writer) write(file, name string, data any) error {
	w.buf.Reset()
	if err := templates.ExecuteTemplate(&w.buf, name, data); err != nil {
		return fmt.Errorf("failed to generate %s: %w", file, err)
	}
	if err := w.fs.MkdirAll(path.Dir(file)); err != nil {
		return fmt.Errorf("failed to create the folder of %s: %w", file, err)
	}
	return w.fs.WriteFile(file, bytes.Clone(w.buf.Bytes()))
}

// WriteRepo writes the propagit repository under root: one file per
// template, per policy and per cluster.
func (m *Model) WriteRepo(fs filesys.FileSystem, root string) error {
	w := &writer{fs: fs}
	for i := range m.Templates {
		t := &m.Templates[i]
		if err := w.write(TemplateFile(root, *t), t.Kind, t); err != nil {
			return err
		}
	}
	for _, g := range m.Groups {
		dir := path.Join(root, "policies", g.Namespace)
		if err := w.write(path.Join(dir, "pp-"+g.Name+".yaml"), "PropagationPolicy", g); err != nil {
			return err
		}
		if err := w.write(path.Join(dir, "op-"+g.Name+".yaml"), "OverridePolicy", g); err != nil {
			return err
		}
	}
	for _, c := range m.Clusters {
		if err := w.write(path.Join(root, "clusters", c.Name+".yaml"), "Cluster", c); err != nil {
			return err
		}
	}
	return nil
}

// WriteKustomize writes the same scenario without propagit under root:
//
//	base/<group>/            the group's 20 templates + its owner labels (rule 1)
//	base/                    all groups
//	variants/<group>-<r>/    the group for one region: images: (rule 2) or
//	                         commonAnnotations: (rule 3)
//	overlays/<cluster>/      the groups placed on the cluster, through the
//	                         cluster's region variant, + replicas: for Divided
//
// It approximates the policies rather than equals them. The placement and the
// Webster replica split are worked out by hand here (by the generator) and
// frozen into each overlay's resource list and replicas:, which is exactly
// what a team without a scheduler does; commonAnnotations also writes the pod
// template's annotations, which Karmada's annotationsOverrider does not. The
// comparison stays fair because each overlay builds the same objects, with the
// same edited fields, as propagit's Work for that cluster (both outputs are
// checked against one model), and kustomize is not asked to do anything the
// render skips; propagit additionally matches policies, schedules, stamps and
// prunes. Overlays reference per-group bases rather than the whole base:
// shipping every template to every cluster would give kustomize more
// objects to build than propagit renders.
func (m *Model) WriteKustomize(fs filesys.FileSystem, root string) error {
	w := &writer{fs: fs}
	groupDirs := make([]string, 0, len(m.Groups))
	for _, g := range m.Groups {
		if err := m.writeKustomizeGroup(w, root, g); err != nil {
			return err
		}
		groupDirs = append(groupDirs, g.Name)
	}
	if err := w.write(root+"/base/kustomization.yaml", "base", map[string]any{"Files": groupDirs}); err != nil {
		return err
	}
	for c := range m.Clusters {
		if err := w.write(OverlayPath(root, c)+"/kustomization.yaml", "overlay", m.overlay(c)); err != nil {
			return err
		}
	}
	return nil
}

func (m *Model) writeKustomizeGroup(w *writer, root string, g Group) error {
	var files []string
	type image struct{ Name, NewName string }
	var images []image
	for i := range m.Templates {
		t := &m.Templates[i]
		if t.GroupIndex != g.Index {
			continue
		}
		files = append(files, t.Name+".yaml")
		if err := w.write(path.Join(root, "base", g.Name, t.Name+".yaml"), t.Kind, t); err != nil {
			return err
		}
		if t.Kind == "Deployment" {
			repo := t.Image[:strings.LastIndexByte(t.Image, ':')]
			images = append(images, image{Name: repo, NewName: "registry-" + g.ImageRegion + ".example.com" + repo[len("registry.example.com"):]})
		}
	}
	base := map[string]any{"Files": files, "Labels": true, "Namespace": g.Namespace}
	if err := w.write(path.Join(root, "base", g.Name, "kustomization.yaml"), "base", base); err != nil {
		return err
	}
	img := map[string]any{"Group": g.Name, "Images": images}
	if err := w.write(path.Join(root, "variants", g.Name+"-"+g.ImageRegion, "kustomization.yaml"), "variant", img); err != nil {
		return err
	}
	anno := map[string]any{"Group": g.Name, "Annotate": true}
	return w.write(path.Join(root, "variants", g.Name+"-"+g.AnnotationRegion, "kustomization.yaml"), "variant", anno)
}

// OverlayPath is the folder of cluster c's overlay in a kustomize tree
// written under root.
func OverlayPath(root string, c int) string {
	return fmt.Sprintf("%s/overlays/%s", root, ClusterName(c))
}

// overlay is the kustomization data of cluster c.
func (m *Model) overlay(c int) map[string]any {
	type replicas struct {
		Name  string
		Count int64
	}
	var resources []string
	var reps []replicas
	r := region(c)
	for _, g := range m.Groups {
		if !g.places(c) {
			continue
		}
		switch r {
		case g.ImageRegion, g.AnnotationRegion:
			resources = append(resources, "../../variants/"+g.Name+"-"+r)
		default:
			resources = append(resources, "../../base/"+g.Name)
		}
	}
	for i := range m.Templates {
		t := &m.Templates[i]
		if t.Kind == "Deployment" && m.Groups[t.GroupIndex].Placement == "divided" && m.Groups[t.GroupIndex].places(c) {
			reps = append(reps, replicas{Name: t.Name, Count: m.want(t, c).replicas})
		}
	}
	return map[string]any{"Resources": resources, "Replicas": reps}
}

// TemplateFile is the file of t in a repository WriteRepo wrote under root.
func TemplateFile(root string, t Template) string {
	return path.Join(root, "apps", t.Namespace, t.Name+".yaml")
}
