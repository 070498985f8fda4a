package tables

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
)

// A tablePlan is what a collector whose queries follow its table's shape
// (inbox, outbox) plans for the table as it is: what it reads, and the
// notes and warnings the shape gave (check prints them).
type tablePlan interface {
	requirements() pgschema.Requirements
	notices() (notes, warnings []string)
}

// planFunc plans for the table as cols says it is (nil: the default
// shape); versioned says whether its rows carry versions.
type planFunc[P tablePlan] func(cols map[string]pgschema.ColumnType, versioned bool) (P, error)

// shapedRequirements says what a collector needs from its table in the
// default shape; its Resolve plans for the table as it is.
func shapedRequirements[P tablePlan](table, key string, plan planFunc[P]) pgschema.Requirements {
	p, err := plan(nil, true)
	if err != nil {
		panic(err) // the default shape of a valid config always resolves
	}
	req := p.requirements()
	req.Resolve = func(ctx context.Context, tx pgx.Tx) (pgschema.Resolved, error) {
		cols, err := columnTypes(ctx, tx, table, key+".table")
		if err != nil {
			return pgschema.Resolved{}, err
		}
		versioned, err := rowVersions(ctx, tx, table)
		if err != nil {
			return pgschema.Resolved{}, err
		}
		p, err := plan(cols, versioned)
		if err != nil {
			return pgschema.Resolved{}, err
		}
		notes, warnings := p.notices()
		return pgschema.Resolved{Requirements: p.requirements(), Notes: notes, Warnings: warnings}, nil
	}
	return req
}

// resolvePlan reads the table's columns and returns the plan for them,
// after checking that the columns it reads exist, and those of the
// related tables it reads (an inbox's dead letters).
func resolvePlan[P tablePlan](ctx context.Context, tx pgx.Tx, table, key string, versioned bool, plan planFunc[P]) (P, error) {
	var none P
	cols, err := columnTypes(ctx, tx, table, key+".table")
	if err != nil {
		return none, err
	}
	p, err := plan(cols, versioned)
	if err != nil {
		return none, err
	}
	req := p.requirements()
	if _, err := pgschema.CheckColumns(req, cols); err != nil {
		return none, err
	}
	for _, r := range req.Related {
		rc, err := columnTypes(ctx, tx, r.Table, key+".preset")
		if err != nil {
			return none, err
		}
		if _, err := pgschema.CheckColumns(r, rc); err != nil {
			return none, err
		}
	}
	return p, nil
}
