package camunda

import "context"

// Sort keys accepted by the deployment list (a subset).
const (
	DeploymentSortTime = "deploymentTime"
)

// Deployment is one element of GET /deployment (the fields the exporter
// uses).
type Deployment struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// DeploymentTime is rendered by the engine in its JVM's offset, which is
	// what makes it useful to check which time zone the engine writes its
	// database timestamps in.
	DeploymentTime Time `json:"deploymentTime"`
}

// ListDeployments returns one page of deployments.
func (c *Client) ListDeployments(ctx context.Context, p Page) ([]Deployment, error) {
	return getPage[Deployment](ctx, c, "/deployment", noFilter{}, p)
}
