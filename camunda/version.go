package camunda

import (
	"context"
	"strconv"
	"strings"
)

// Flavor names the engine distribution, as used in the flavor label.
type Flavor string

// Flavors.
const (
	FlavorCamunda  Flavor = "camunda"
	FlavorOperaton Flavor = "operaton"
	FlavorCIBSeven Flavor = "cibseven"
	FlavorUnknown  Flavor = "unknown"
)

// EngineInfo is what the exporter reports about an engine.
type EngineInfo struct {
	Version string
	// ProductName is the telemetry product name ("Camunda BPM Runtime",
	// "Operaton BPM Runtime", ...), empty when the engine did not tell.
	ProductName string
	Flavor      Flavor
}

// Version returns the engine's version string (GET /version). Forks report
// their own version (Operaton 1.x/2.x, CIB seven 1.x/2.x), not 7.x.
func (c *Client) Version(ctx context.Context) (string, error) {
	var res versionResult
	if err := c.get(ctx, "/version", nil, &res); err != nil {
		return "", err
	}
	return res.Version, nil
}

// ProductName returns the product name from GET /telemetry/data. The
// endpoint may be missing, forbidden for the exporter's user or removed in
// a fork; callers should treat an error as "no signal".
func (c *Client) ProductName(ctx context.Context) (string, error) {
	var res struct {
		Product struct {
			Name string `json:"name"`
		} `json:"product"`
	}
	if err := c.get(ctx, "/telemetry/data", nil, &res); err != nil {
		return "", err
	}
	return res.Product.Name, nil
}

// EngineInfo reads the version (required) and, as a second signal, the
// telemetry product name (best effort; a failure there is logged at debug
// and ignored), and detects the flavor.
func (c *Client) EngineInfo(ctx context.Context) (EngineInfo, error) {
	v, err := c.Version(ctx)
	if err != nil {
		return EngineInfo{}, err
	}
	name, err := c.ProductName(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return EngineInfo{}, err
		}
		c.log.Debug("camunda: no telemetry product name; detecting flavor from the version alone", "error", err.Error())
		name = ""
	}
	return EngineInfo{Version: v, ProductName: name, Flavor: DetectFlavor(v, name)}, nil
}

// DetectFlavor guesses the distribution from the version string and the
// telemetry product name (either may be empty). It is a pure function so the
// rules can follow what the engines are observed to return
// (docs/camunda-rest-verified.md).
//
// Assumptions, from the engines' sources:
//   - A product name naming Operaton or CIB seven decides. Operaton's is
//     "Operaton BPM Runtime". Camunda's is "Camunda BPM Runtime"; CIB seven
//     may keep that name (unverified).
//   - Camunda 7 versions are 7.x (CE "7.24.0", EE "7.24.0-ee"). The forks
//     restarted at 1.x/2.x, so a major version below 7 is a fork: with a
//     Camunda product name that is CIB seven (Operaton renamed the product);
//     with no product name the two forks cannot be told apart and the
//     answer is FlavorUnknown rather than a guess.
//   - A fork's name inside the version string (a vendor build suffix) decides.
func DetectFlavor(version, productName string) Flavor {
	p := strings.ToLower(productName)
	v := strings.ToLower(version)
	switch {
	case strings.Contains(p, "operaton"), strings.Contains(v, "operaton"):
		return FlavorOperaton
	case strings.Contains(p, "cib"), strings.Contains(v, "cibseven"), strings.Contains(v, "cib-seven"):
		return FlavorCIBSeven
	}
	major, ok := majorVersion(v)
	switch {
	case ok && major == 7:
		return FlavorCamunda
	case ok && major < 7 && strings.Contains(p, "camunda"):
		return FlavorCIBSeven
	case !ok && strings.Contains(p, "camunda"):
		return FlavorCamunda
	}
	return FlavorUnknown
}

func majorVersion(v string) (int, bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	end := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	if end == 0 {
		return 0, false
	}
	if end > 0 {
		v = v[:end]
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}
