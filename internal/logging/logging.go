// Package logging configures zap once, behind logr, for every long-running
// command, and names the keys propagit logs with.
package logging

import (
	"fmt"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Keys used in structured logs.
const (
	KeyCluster  = "cluster"
	KeyTemplate = "template"
	KeyRevision = "revision"
)

// Options are the log flags.
type Options struct {
	Level  string
	Format string
}

// BindFlags registers --log-level and --log-format.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Level, "log-level", "info", "log level: debug, info or error")
	fs.StringVar(&o.Format, "log-format", "json", "log format: json or console")
}

// New builds the logger.
func (o Options) New() (logr.Logger, error) {
	var lvl zapcore.Level
	if err := lvl.UnmarshalText([]byte(o.Level)); err != nil {
		return logr.Discard(), fmt.Errorf("invalid --log-level %q: %w", o.Level, err)
	}
	cfg := zap.NewProductionConfig()
	switch o.Format {
	case "json":
	case "console":
		cfg = zap.NewDevelopmentConfig()
	default:
		return logr.Discard(), fmt.Errorf("invalid --log-format %q: want json or console", o.Format)
	}
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.DisableStacktrace = true
	z, err := cfg.Build()
	if err != nil {
		return logr.Discard(), err
	}
	return zapr.NewLogger(z), nil
}
