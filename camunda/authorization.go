package camunda

import (
	"context"
	"strconv"
)

// Resource types and names of the engine's authorization (the engine's
// Resources enum), for CheckAuthorization.
const (
	ResourceProcessDefinition = 6
	ResourceProcessInstance   = 8
	ResourceTenant            = 2
)

// resourceNames are the engine's names of the resource types.
var resourceNames = map[int]string{
	ResourceProcessDefinition: "ProcessDefinition",
	ResourceProcessInstance:   "ProcessInstance",
	ResourceTenant:            "Tenant",
}

// AuthorizationCheck is GET /authorization/check's answer.
type AuthorizationCheck struct {
	PermissionName string `json:"permissionName"`
	ResourceName   string `json:"resourceName"`
	ResourceID     string `json:"resourceId"`
	Authorized     bool   `json:"authorized"`
}

// CheckAuthorization asks whether the authenticated user holds permission
// on every resource of the type (a global check: resource id "*"). The
// engine answers only for an authenticated user.
func (c *Client) CheckAuthorization(ctx context.Context, permission string, resourceType int) (AuthorizationCheck, error) {
	v := newParams()
	v.Set("permissionName", permission)
	v.Set("resourceName", resourceNames[resourceType])
	v.Set("resourceType", strconv.Itoa(resourceType))
	v.Set("resourceId", "*")
	var res AuthorizationCheck
	err := c.get(ctx, "/authorization/check", v.Values, &res)
	return res, err
}
