package helm

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
)

// validateSchemas checks the values of the chart and of each subchart
// against their values.schema.json, as Helm does, with a compiler that
// loads nothing: a $ref to a file or a URL is an error, never a read.
func validateSchemas(hc *chartv2.Chart, top common.Values) error {
	vals, _ := top["Values"].(common.Values)
	return validateChart(hc, vals)
}

func validateChart(hc *chartv2.Chart, vals map[string]any) error {
	if len(hc.Schema) > 0 {
		if err := validateOne(hc.Schema, vals); err != nil {
			return fmt.Errorf("%s: %v", hc.Name(), err)
		}
	}
	for _, sub := range hc.Dependencies() {
		sv, _ := vals[sub.Name()].(map[string]any)
		if sv == nil {
			continue
		}
		if err := validateChart(sub, sv); err != nil {
			return err
		}
	}
	return nil
}

func validateOne(schemaJSON []byte, vals map[string]any) error {
	schema, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource("file:///values.schema.json", schema); err != nil {
		return err
	}
	v, err := c.Compile("file:///values.schema.json")
	if err != nil {
		return err
	}
	return v.Validate(map[string]any(vals))
}

// noLoader refuses every $ref outside the schema itself.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, errors.New("the schema refers to " + url + ": propagit loads no schema from a file or the network")
}
