package cli

import (
	"sync"

	"github.com/propagit/propagit/internal/charts"
	"github.com/propagit/propagit/internal/helm"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

// processCharts renders the HelmCharts of every command of this process:
// renders with the same inputs (diff's base and head, most clusters)
// are done once.
var processCharts = sync.OnceValue(func() *charts.Charts { return charts.New(helm.DefaultLimits(), nil) })

// chartsFor is the chart renderer of set for a command.
func chartsFor(set *load.Set) render.ChartRenderer { return processCharts().For(set) }
