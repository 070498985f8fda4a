package camunda

import (
	"context"
	"sort"
)

// Tenant is one element of GET /tenant.
type Tenant struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// TenantQuery filters GET /tenant. UserMember keeps the tenants that user
// is a member of, directly or through one of its groups (as the engine's
// tenant check counts membership).
type TenantQuery struct {
	UserMember string
}

func (q TenantQuery) encode(v params) {
	v.set("userMember", q.UserMember)
	if q.UserMember != "" {
		v.Set("includingGroupsOfUser", "true")
	}
}

// maxTenants bounds the tenants listed: an engine's tenants are few, and
// a list beyond this says more than any check needs.
const maxTenants = 10000

// TenantIDs lists the ids of the tenants the authenticated user may read
// (READ on the tenant, or every tenant with the engine's authorization
// off) that match q, sorted.
func (c *Client) TenantIDs(ctx context.Context, q TenantQuery) ([]string, error) {
	tenants, _, err := Collect(ctx, Page{Sort: Sort{By: "id", Order: Ascending}}, c.DefaultPageSize(), maxTenants,
		func(ctx context.Context, p Page) ([]Tenant, error) { return getPage[Tenant](ctx, c, "/tenant", q, p) })
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(tenants))
	for _, t := range tenants {
		ids = append(ids, t.ID)
	}
	sort.Strings(ids)
	return ids, nil
}
