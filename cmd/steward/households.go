package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/store"
)

const householdsUsage = `Usage:
  steward households create NAME
  steward households add NAME OWNER_ID
  steward households remove NAME OWNER_ID
  steward households list [--json]
  steward households policy add NAME --tool T [--min-amount N] [--currency C] --approvers OWNER_ID,...
  steward households policy list NAME [--json]
  steward households policy remove NAME POLICY_ID

  create  create a household (lowercase letters, digits, '-' and '_').
  add     add an owner to a household (an owner belongs to one household at most).
  remove  take an owner out of a household.
  list    list the households and their members.
  policy  a household approval policy: a call of a member to --tool (with, for money tools,
          an amount of at least --min-amount minor units, e.g. cents; of --currency only,
          if given) also waits for the approval of each of --approvers (other members).

All connect as DATABASE_URL (steward_owner).
`

func runHouseholds(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, householdsUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"create": householdsCreate,
		"add":    householdsMember(true),
		"remove": householdsMember(false),
		"list":   householdsList,
		"policy": func(ctx context.Context, e env, cfg config.Config, args []string) error {
			return subcommand(ctx, e, cfg, args, householdsUsage, map[string]func(context.Context, env, config.Config, []string) error{
				"add": policyAdd, "list": policyList, "remove": policyRemove,
			})
		},
	})
}

func householdsCreate(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("households create", flag.ContinueOnError)
	pos, err := parseFlags(fs, args, householdsUsage, 1, 1)
	if err != nil {
		return err
	}
	if err := store.ValidateHouseholdName(pos[0]); err != nil {
		return fmt.Errorf("households create: %w", err)
	}
	svc, done, err := operatorService(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer done()
	h, err := svc.CreateHousehold(ctx, pos[0])
	if err != nil {
		return fmt.Errorf("households create: %w", err)
	}
	fmt.Fprintf(e.stdout, "Created household %q (id %s). Add members with: steward households add %s OWNER_ID\n", h.Name, h.ID, h.Name)
	return nil
}

func parseOwnerID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return id, fmt.Errorf("%q is not an owner id (steward owners list)", s)
	}
	return id, nil
}

func householdsMember(add bool) func(context.Context, env, config.Config, []string) error {
	verb := map[bool]string{true: "add", false: "remove"}[add]
	return func(ctx context.Context, e env, cfg config.Config, args []string) error {
		fs := flag.NewFlagSet("households "+verb, flag.ContinueOnError)
		pos, err := parseFlags(fs, args, householdsUsage, 2, 2)
		if err != nil {
			return err
		}
		owner, err := parseOwnerID(pos[1])
		if err != nil {
			return fmt.Errorf("households %s: %w", verb, err)
		}
		svc, done, err := operatorService(ctx, e, cfg)
		if err != nil {
			return err
		}
		defer done()
		if err := svc.SetHouseholdMember(ctx, pos[0], owner, add); err != nil {
			return fmt.Errorf("households %s: %w", verb, err)
		}
		fmt.Fprintf(e.stdout, "%s owner %s %s household %q.\n", map[bool]string{true: "Added", false: "Removed"}[add], owner,
			map[bool]string{true: "to", false: "from"}[add], pos[0])
		return nil
	}
}

func householdsList(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("households list", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args, householdsUsage, 0, 0); err != nil {
		return err
	}
	svc, done, err := operatorService(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer done()
	hs, err := svc.ListHouseholds(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, hs)
	}
	if len(hs) == 0 {
		fmt.Fprintln(e.stdout, "No households yet. Create one with: steward households create NAME")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOUSEHOLD\tMEMBER\tOWNER ID")
	for _, h := range hs {
		if len(h.Members) == 0 {
			fmt.Fprintf(tw, "%s\t(none)\t\n", h.Name)
		}
		for _, m := range h.Members {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", h.Name, m.Name, m.OwnerID)
		}
	}
	return tw.Flush()
}

func policyAdd(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("households policy add", flag.ContinueOnError)
	tool := fs.String("tool", "", "the tool whose calls need the approvers")
	minAmount := fs.String("min-amount", "", "only calls moving at least this many minor units (e.g. cents)")
	currency := fs.String("currency", "", "only amounts in this currency (ISO 4217)")
	approvers := fs.String("approvers", "", "comma-separated owner ids of the other members who must approve")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args, householdsUsage, 1, 1)
	if err != nil {
		return err
	}
	if *tool == "" || *approvers == "" {
		return usageError{msg: "--tool and --approvers are required", usage: householdsUsage}
	}
	p := store.HouseholdPolicy{Household: pos[0], Tool: *tool, Currency: *currency}
	if *minAmount != "" {
		n, err := strconv.ParseInt(*minAmount, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("households policy add: --min-amount must be a whole number of minor units (e.g. 10000 for 100.00), got %q", *minAmount)
		}
		p.MinAmountMinor = &n
	}
	for _, s := range strings.Split(*approvers, ",") {
		id, err := parseOwnerID(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("households policy add: --approvers: %w", err)
		}
		p.Approvers = append(p.Approvers, id)
	}
	svc, done, err := operatorService(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer done()
	if p, err = svc.AddHouseholdPolicy(ctx, p); err != nil {
		return fmt.Errorf("households policy add: %w", err)
	}
	if *asJSON {
		return writeJSON(e.stdout, p)
	}
	fmt.Fprintf(e.stdout, "Added policy %s: %s calls of %q members also need %d approver(s).\n", p.ID, p.Tool, p.Household, len(p.Approvers))
	return nil
}

func policyList(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("households policy list", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args, householdsUsage, 1, 1)
	if err != nil {
		return err
	}
	svc, done, err := operatorService(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer done()
	ps, err := svc.ListHouseholdPolicies(ctx, pos[0])
	if err != nil {
		return fmt.Errorf("households policy list: %w", err)
	}
	if *asJSON {
		return writeJSON(e.stdout, ps)
	}
	if len(ps) == 0 {
		fmt.Fprintf(e.stdout, "Household %q has no policies.\n", pos[0])
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTOOL\tMIN AMOUNT\tAPPROVERS")
	for _, p := range ps {
		min := "-"
		if p.MinAmountMinor != nil {
			min = strconv.FormatInt(*p.MinAmountMinor, 10) + " " + p.Currency
		}
		ids := make([]string, len(p.Approvers))
		for i, a := range p.Approvers {
			ids[i] = a.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.ID, p.Tool, strings.TrimSpace(min), strings.Join(ids, ","))
	}
	return tw.Flush()
}

func policyRemove(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("households policy remove", flag.ContinueOnError)
	pos, err := parseFlags(fs, args, householdsUsage, 2, 2)
	if err != nil {
		return err
	}
	id, err := uuid.Parse(pos[1])
	if err != nil {
		return fmt.Errorf("households policy remove: %q is not a policy id (steward households policy list %s)", pos[1], pos[0])
	}
	svc, done, err := operatorService(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer done()
	if err := svc.RemoveHouseholdPolicy(ctx, pos[0], id); err != nil {
		return fmt.Errorf("households policy remove: %w", err)
	}
	fmt.Fprintf(e.stdout, "Removed policy %s.\n", id)
	return nil
}
