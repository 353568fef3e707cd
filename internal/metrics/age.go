package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
)

// ageCollector remembers the time of the last success per label value and
// exports it twice: as a Unix timestamp, and as the seconds elapsed since,
// computed from the clock when scraped. A label value appears after its
// first success and disappears with forget.
type ageCollector struct {
	clock clock.PassiveClock
	label string // empty for a collector without labels
	stamp *prometheus.Desc
	since *prometheus.Desc

	mu   sync.Mutex
	last map[string]time.Time
}

var _ prometheus.Collector = (*ageCollector)(nil)

func newAgeCollector(clk clock.PassiveClock, label, stampName, stampHelp, sinceName, sinceHelp string) *ageCollector {
	var labels []string
	if label != "" {
		labels = []string{label}
	}
	return &ageCollector{
		clock: clk,
		label: label,
		stamp: prometheus.NewDesc(stampName, stampHelp, labels, nil),
		since: prometheus.NewDesc(sinceName, sinceHelp, labels, nil),
		last:  map[string]time.Time{},
	}
}

func (c *ageCollector) set(value string, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last[value] = t
}

func (c *ageCollector) forget(value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.last, value)
}

// Describe implements prometheus.Collector.
func (c *ageCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.stamp
	ch <- c.since
}

// Collect implements prometheus.Collector.
func (c *ageCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	for value, t := range c.last {
		var lv []string
		if c.label != "" {
			lv = []string{value}
		}
		since := max(now.Sub(t).Seconds(), 0)
		ch <- prometheus.MustNewConstMetric(c.stamp, prometheus.GaugeValue, unixSeconds(t), lv...)
		ch <- prometheus.MustNewConstMetric(c.since, prometheus.GaugeValue, since, lv...)
	}
}

// unixSeconds is t in Unix seconds with sub-second precision; unlike
// UnixNano it does not overflow for the zero time.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}
