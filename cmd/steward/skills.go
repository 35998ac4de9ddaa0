package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/skillpack"
	"github.com/stewardhq/steward/internal/skills"
	"github.com/stewardhq/steward/internal/steward"
)

const skillsUsage = `Usage:
  steward skills list [--json] [--owner ID]
  steward skills add PATH|URL [--own] [--override] [--owner ID]
  steward skills scan PATH [--fail-on low|medium|high|critical] [--json]
  steward skills remove ID [--owner ID]
  steward skills enable ID [--override] [--owner ID]
  steward skills disable ID [--owner ID]

  list     the built-in and the owner's skills, one a line: id, status, on/off, origin,
           name, version, worst finding; --json prints each as JSON
  add      read, check and scan a skill — a folder holding SKILL.md, a .zip or .tar.gz, a
           SKILL.md, or an https URL of one (fetched through the egress guard) — print what
           it is (name, description, files, scan) and install it, like POST /v1/skills.
           --own says you wrote it: its playbook is then instructions, not data. A finding
           at or above high installs it blocked; --override lets it run anyway (recorded in
           the audit log)
  scan     offline: read and scan PATH (a folder, archive or SKILL.md) and print the
           findings; exits 1 when one is at or above --fail-on (default high), 2 for a
           skill that cannot be read. Needs no database: for CI
  remove   delete one of the owner's skills by id (skills list); a built-in is only turned off
  enable   turn a skill on (a built-in: builtin:NAME); a blocked skill needs --override
  disable  turn a skill off
`

func runSkills(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, skillsUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"list":   skillsList,
		"add":    skillsAdd,
		"scan":   skillsScan,
		"remove": skillsRemove,
		"enable": func(ctx context.Context, e env, cfg config.Config, a []string) error {
			return skillsSet(ctx, e, cfg, a, true)
		},
		"disable": func(ctx context.Context, e env, cfg config.Config, a []string) error {
			return skillsSet(ctx, e, cfg, a, false)
		},
	})
}

// printSkill writes one skill as a line.
func printSkill(w io.Writer, sk steward.Skill) {
	on := "off"
	if sk.Enabled {
		on = "on"
	}
	fmt.Fprintf(w, "%s  %s %s  %s  %s %s  worst %s\n", sk.ID, sk.Status, on, sk.Origin, sk.Name, sk.Version, sk.Worst)
}

func skillsList(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("skills list", flag.ContinueOnError)
	owner, asJSON := ownerFlag(fs), fs.Bool("json", false, "print JSON lines")
	if _, err := parseFlags(fs, args, skillsUsage, 0, 0); err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		o, err := a.Skills.List(ctx, owners[0])
		if err != nil {
			return fmt.Errorf("skills list: %w", err)
		}
		for _, sk := range o.Skills {
			if *asJSON {
				b, _ := json.Marshal(sk)
				fmt.Fprintln(e.stdout, string(b))
				continue
			}
			printSkill(e.stdout, sk)
		}
		return nil
	})
}

// source is the skill PATH or URL names.
func source(arg string, own bool) (skills.Source, error) {
	if strings.HasPrefix(arg, "https://") || strings.HasPrefix(arg, "http://") {
		return skills.Source{URL: arg, Own: own}, nil
	}
	fi, err := os.Stat(arg)
	if err != nil {
		return skills.Source{}, fmt.Errorf("%s: %w", arg, err)
	}
	if fi.IsDir() {
		return skills.Source{Dir: os.DirFS(arg), FileName: filepath.Base(arg), Own: own}, nil
	}
	if fi.Size() > skillpack.MaxArchiveBytes {
		return skills.Source{}, fmt.Errorf("%s is over %d KB: too big for a skill", arg, skillpack.MaxArchiveBytes>>10)
	}
	data, err := os.ReadFile(arg)
	if err != nil {
		return skills.Source{}, err
	}
	return skills.Source{Archive: data, FileName: filepath.Base(arg), Own: own}, nil
}

func skillsAdd(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("skills add", flag.ContinueOnError)
	owner := ownerFlag(fs)
	own := fs.Bool("own", false, "you wrote it: its playbook is instructions, not data")
	override := fs.Bool("override", false, "let it run despite findings at or above high (audited)")
	pos, err := parseFlags(fs, args, skillsUsage, 1, 1)
	if err != nil {
		return err
	}
	src, err := source(pos[0], *own)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		staged, err := a.Skills.Stage(ctx, owners[0], src, nil, "")
		if err != nil {
			return fmt.Errorf("skills add: %w", err)
		}
		fmt.Fprintln(e.stdout, skills.Card(staged))
		sk, err := a.Skills.Install(ctx, owners[0], uuid.MustParse(staged.ID))
		if err != nil {
			return fmt.Errorf("skills add: %w", err)
		}
		if sk.Status == steward.SkillBlocked && *override {
			if sk, err = a.Skills.Override(ctx, owners[0], uuid.MustParse(sk.ID), "cli"); err != nil {
				return fmt.Errorf("skills add: %w", err)
			}
		}
		printSkill(e.stdout, sk)
		return nil
	})
}

func skillsScan(_ context.Context, e env, _ config.Config, args []string) error {
	fs := flag.NewFlagSet("skills scan", flag.ContinueOnError)
	failOn := fs.String("fail-on", "high", "the severity at or above which the scan fails")
	asJSON := fs.Bool("json", false, "print the findings as JSON")
	pos, err := parseFlags(fs, args, skillsUsage, 1, 1)
	if err != nil {
		return err
	}
	threshold, ok := steward.ParseSeverity(*failOn)
	if !ok || threshold == steward.SeverityNone {
		return usageError{msg: "--fail-on must be low, medium, high or critical", usage: skillsUsage}
	}
	src, err := source(pos[0], false)
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	if src.URL != "" {
		return usageError{msg: "skills scan reads a local PATH, not a URL", usage: skillsUsage}
	}
	var sk skillpack.Skill
	if src.Dir != nil {
		sk, err = skillpack.ReadDir(src.Dir)
	} else {
		sk, err = skillpack.Read(src.Archive, src.FileName)
	}
	if err != nil {
		return exitError{code: 2, msg: "skills scan: " + err.Error()}
	}
	findings, worst := skillpack.Scan(sk)
	if *asJSON {
		b, _ := json.Marshal(map[string]any{"name": sk.Manifest.Name, "version": sk.Manifest.Version, "files": sk.Listing(), "findings": findings, "worst": worst})
		fmt.Fprintln(e.stdout, string(b))
	} else {
		m := sk.Manifest
		fmt.Fprintln(e.stdout, skills.Card(steward.Skill{Name: m.Name, Version: m.Version, Description: m.Description,
			RiskLevel: m.RiskLevel, Source: pos[0], Files: sk.Listing(), Findings: findings, Worst: worst}))
	}
	if worst >= threshold {
		return exitError{code: 1, msg: fmt.Sprintf("skills scan: %s has a finding at %s, at or above %s", pos[0], worst, threshold)}
	}
	return nil
}

func skillsRemove(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("skills remove", flag.ContinueOnError)
	owner := ownerFlag(fs)
	pos, err := parseFlags(fs, args, skillsUsage, 1, 1)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		if err := a.Skills.Delete(ctx, owners[0], pos[0]); err != nil {
			return fmt.Errorf("skills remove: %w", err)
		}
		fmt.Fprintf(e.stdout, "removed %s\n", pos[0])
		return nil
	})
}

func skillsSet(ctx context.Context, e env, cfg config.Config, args []string, on bool) error {
	fs := flag.NewFlagSet("skills enable", flag.ContinueOnError)
	owner := ownerFlag(fs)
	override := fs.Bool("override", false, "let a blocked skill run despite its findings (audited)")
	pos, err := parseFlags(fs, args, skillsUsage, 1, 1)
	if err != nil {
		return err
	}
	if *override && !on {
		return usageError{msg: "--override goes with enable", usage: skillsUsage}
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		var sk steward.Skill
		var err error
		if id, perr := uuid.Parse(pos[0]); perr == nil && *override {
			sk, err = a.Skills.Override(ctx, owners[0], id, "cli")
		} else {
			sk, err = a.Skills.SetEnabled(ctx, owners[0], pos[0], on)
		}
		if err != nil {
			return fmt.Errorf("skills: %w", err)
		}
		printSkill(e.stdout, sk)
		return nil
	})
}
