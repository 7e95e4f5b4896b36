// Package kube is Capstan's Kubernetes runner and probes: it applies a
// job's manifests with server-side apply under Capstan's own field
// manager, waits on watches until each object is ready, deletes them as a
// compensation, and reads real objects as evidence. It reaches a cluster
// only as a job's target (job.Cluster: the API server a kubernetes.cluster
// resource names, its pinned CA and a token from the secret store), and
// dials through the server's egress allow-list. docs/KUBERNETES.md.
package kube

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/capstan-dev/capstan"
)

// Bounds of what a job's manifests may hold.
const (
	MaxManifestBytes = 1 << 20
	MaxObjects       = 200
)

// placeholder is a reference in a string value: ${param.NAME}, a job
// parameter, ${resource.name}, the name of the resource the operation
// acts on, or ${binding.REQ.ATTR}, an attribute of the provider bound to
// the requirement REQ (object_storage for object-storage): a store's
// endpoint, or a key, its secret reference resolved to its value.
var placeholder = regexp.MustCompile(`\$\{(param\.[A-Za-z0-9_]+|resource\.name|binding\.[a-z0-9_]+\.[a-z0-9_]+)\}`)

// Objects reads manifests: YAML (or JSON) documents, each one object
// with an apiVersion, a kind and a name. In a string value, ${param.NAME}
// is the parameter NAME, and ${resource.name} the operation's resource's
// name (Params); a value that is only a placeholder
// takes the parameter's type when it is a JSON number or boolean (as an
// unquoted YAML scalar would), so `replicas: ${param.replicas}` is a
// number. Parameters fill values only: no parameter can add a field or a
// document. Namespaced objects without a namespace get namespace (which
// objects are namespaced is the API server's to say, at apply).
func Objects(manifests string, params map[string]string) ([]*unstructured.Unstructured, error) {
	return decodeObjects(manifests, func(raw map[string]any) (any, error) { return fill(raw, params) })
}

// Rendered reads objects already rendered (a Helm release's manifest):
// as Objects does, with no placeholder filled (a "${" there is the
// chart's own text).
func Rendered(manifest string) ([]*unstructured.Unstructured, error) {
	return decodeObjects(manifest, func(raw map[string]any) (any, error) { return raw, nil })
}

// decodeObjects decodes YAML documents into objects, each through fill.
func decodeObjects(manifests string, fill func(map[string]any) (any, error)) ([]*unstructured.Unstructured, error) {
	if len(manifests) > MaxManifestBytes {
		return nil, capstan.Errorf(capstan.EINVALID, "manifests are %d bytes, more than %d", len(manifests), MaxManifestBytes)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	var out []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		var raw map[string]any
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, capstan.Errorf(capstan.EINVALID, "manifest document %d: %v", doc, err)
		}
		if len(raw) == 0 {
			continue
		}
		if len(out) == MaxObjects {
			return nil, capstan.Errorf(capstan.EINVALID, "manifests hold more than %d objects", MaxObjects)
		}
		filled, err := fill(raw)
		if err != nil {
			return nil, capstan.Errorf(capstan.EINVALID, "manifest document %d: %v", doc, err)
		}
		obj := &unstructured.Unstructured{Object: filled.(map[string]any)}
		if err := checkObject(obj); err != nil {
			return nil, capstan.Errorf(capstan.EINVALID, "manifest document %d: %v", doc, err)
		}
		out = append(out, obj)
	}
	if len(out) == 0 {
		return nil, capstan.Errorf(capstan.EINVALID, "manifests hold no object")
	}
	return out, nil
}

// Values reads a YAML document of values (a helm step's), filling its
// placeholders as Objects does: values only.
func Values(doc string, params map[string]string) (map[string]any, error) {
	if len(doc) > MaxManifestBytes {
		return nil, capstan.Errorf(capstan.EINVALID, "values are %d bytes, more than %d", len(doc), MaxManifestBytes)
	}
	var raw map[string]any
	if err := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(doc), 4096).Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return nil, capstan.Errorf(capstan.EINVALID, "values: %v", err)
	}
	if raw == nil {
		return map[string]any{}, nil
	}
	filled, err := fill(raw, params)
	if err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "values: %v", err)
	}
	return filled.(map[string]any), nil
}

// checkObject checks what the runner needs of an object before the API
// server checks the rest (admission answers for the object's own schema).
func checkObject(obj *unstructured.Unstructured) error {
	switch {
	case obj.GetAPIVersion() == "" || obj.GetKind() == "":
		return errors.New("an object needs an apiVersion and a kind")
	case obj.GetName() == "":
		return fmt.Errorf("%s has no metadata.name (generateName is not idempotent, and Capstan applies only what it can name)", obj.GetKind())
	}
	if errs := validation.IsDNS1123Subdomain(obj.GetName()); len(errs) > 0 && !strings.Contains(obj.GetName(), ":") {
		return fmt.Errorf("%s name %q: %s", obj.GetKind(), obj.GetName(), strings.Join(errs, "; "))
	}
	if ns := obj.GetNamespace(); ns != "" {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("%s %s: namespace %q: %s", obj.GetKind(), obj.GetName(), ns, strings.Join(errs, "; "))
		}
	}
	return nil
}

// fill replaces the placeholders in v's strings.
func fill(v any, params map[string]string) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, item := range t {
			if placeholder.MatchString(k) {
				return nil, fmt.Errorf("key %q: parameters fill values, not keys", k)
			}
			filled, err := fill(item, params)
			if err != nil {
				return nil, err
			}
			t[k] = filled
		}
		return t, nil
	case []any:
		for i, item := range t {
			filled, err := fill(item, params)
			if err != nil {
				return nil, err
			}
			t[i] = filled
		}
		return t, nil
	case string:
		return fillString(t, params)
	}
	return v, nil
}

func fillString(s string, params map[string]string) (any, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var missing []string
	lookup := func(ref string) string {
		name := placeholder.FindStringSubmatch(ref)[1]
		v, ok := params[name]
		if !ok {
			missing = append(missing, name)
		}
		return v
	}
	if m := placeholder.FindStringSubmatch(s); m != nil && m[0] == s {
		v := lookup(s)
		if len(missing) > 0 {
			return nil, fmt.Errorf("${%s} is not one of the job's parameters", missing[0])
		}
		if strings.HasPrefix(m[1], "binding.") {
			return v, nil // an attribute is a string, whatever it looks like
		}
		return typed(v), nil
	}
	out := placeholder.ReplaceAllStringFunc(s, lookup)
	if len(missing) > 0 {
		return nil, fmt.Errorf("${%s} is not one of the job's parameters", missing[0])
	}
	return out, nil
}

// typed is a parameter's value as a whole scalar: a JSON number or
// boolean as such, anything else as the string it is.
func typed(v string) any {
	dec := json.NewDecoder(bytes.NewReader([]byte(v)))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil || dec.More() {
		return v
	}
	switch n := out.(type) {
	case bool:
		return n
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i
		}
		if f, err := n.Float64(); err == nil {
			return f
		}
	}
	return v
}

// Params are what placeholders refer to, from the job's environment:
// param.NAME is CAPSTAN_PARAM_<NAME> (NAME upper-cased there), and
// resource.name is CAPSTAN_RESOURCE_NAME.
func Params(env map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		if name, ok := strings.CutPrefix(k, "CAPSTAN_PARAM_"); ok {
			out["param."+strings.ToLower(name)] = v
		}
	}
	if v, ok := env["CAPSTAN_RESOURCE_NAME"]; ok {
		out["resource.name"] = v
	}
	for k, v := range env {
		req, ok := strings.CutPrefix(k, "CAPSTAN_BINDING_")
		if req, ok = strings.CutSuffix(req, "_ATTRIBUTES"); !ok {
			continue
		}
		var attrs map[string]any
		if json.Unmarshal([]byte(v), &attrs) != nil {
			continue
		}
		for a, av := range attrs {
			if s, ok := av.(string); ok {
				out["binding."+strings.ToLower(req)+"."+a] = s
			}
		}
	}
	return out
}

// FillRef fills the placeholders of a probe's object reference.
func FillRef(ref capstan.ObjectRef, params map[string]string) (capstan.ObjectRef, error) {
	for _, f := range []*string{&ref.APIVersion, &ref.Kind, &ref.Namespace, &ref.Name} {
		v, err := fillString(*f, params)
		if err != nil {
			return ref, err
		}
		*f = fmt.Sprint(v)
	}
	return ref, nil
}
