package cli

import (
	"sync"

	"github.com/spf13/pflag"

	"github.com/propagit/propagit/internal/charts"
	"github.com/propagit/propagit/internal/helm"
	"github.com/propagit/propagit/internal/helm/fetch"
	"github.com/propagit/propagit/internal/load"
	"github.com/propagit/propagit/internal/render"
)

// processCharts keeps, per chart cache folder, the chart renderer of the
// commands of this process: renders with the same inputs (diff's base and
// head, most clusters) are done once. Commands never fetch: a remote
// chart is read from the cache folder (--chart-cache), as the controller
// filled it, or is reported as not available offline.
var processCharts sync.Map // cache folder → *charts.Charts

// bindChartFlags adds --chart-cache.
func bindChartFlags(f *pflag.FlagSet, dir *string) {
	f.StringVar(dir, "chart-cache", "", "folder of remote Helm charts, read offline (the controller's <cache-dir>/charts, or a copy); without it a HelmChart naming a repoURL fails to render")
}

// charts is the chart renderer of set for a command.
func (o *sourceOptions) charts(set *load.Set) render.ChartRenderer {
	c, ok := processCharts.Load(o.chartCache)
	if !ok {
		var remote charts.Remote
		if o.chartCache != "" {
			remote = charts.FetchWith(&fetch.Fetcher{CacheDir: o.chartCache, Offline: true})
		}
		c, _ = processCharts.LoadOrStore(o.chartCache, charts.New(helm.DefaultLimits(), remote))
	}
	return c.(*charts.Charts).For(set)
}
