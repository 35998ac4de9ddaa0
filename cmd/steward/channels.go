package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/config"
)

const channelsUsage = `Usage:
  steward channels add NAME --kind KIND [settings] [--default] [--owner ID]
  steward channels list [--owner ID]
  steward channels remove NAME [--owner ID]
  steward channels test NAME [--owner ID]
  steward channels default NAME [--owner ID]

  add     set up a notification channel, like POST /v1/channels; the owner's first channel
          (or one added with --default) is their default. Kinds and their settings:
            ntfy      --url https://ntfy.sh --topic TOPIC [--token -]
            telegram  --token - --chat-id ID          (bot token from @BotFather)
            slack     --url -                         (the incoming-webhook URL is a secret)
            email     --host H [--port 587] [--tls starttls|tls] --from A --to B [--username U --password -]
            webhook   --url https://… [--topic T] [--token -]   (--token signs each delivery)
          A secret given as "-" is read from standard input (one line), so it stays out of
          the shell history. Secrets are stored sealed (STEWARD_SECRET_KEY) and never shown.
  list    list the channels (never their secrets), as JSON lines
  remove  remove a channel
  test    send a test message now; prints {"channel","delivered","error"?}
  default make the channel the default (notifications naming no channel go to it)
`

func runChannels(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, channelsUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"add":     channelsAdd,
		"list":    channelsList,
		"remove":  channelsRemove,
		"test":    channelsTest,
		"default": channelsDefault,
	})
}

func channelsAdd(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("channels add", flag.ContinueOnError)
	owner := ownerFlag(fs)
	var in channel.Input
	fs.StringVar(&in.Kind, "kind", "", "ntfy, telegram, slack, email or webhook")
	fs.BoolVar(&in.Default, "default", false, "make it the default channel")
	fs.StringVar(&in.URL, "url", "", "URL (webhook, ntfy server, Slack webhook)")
	fs.StringVar(&in.Topic, "topic", "", "ntfy topic / webhook topic")
	fs.StringVar(&in.Token, "token", "", "token or signing secret (- reads stdin)")
	fs.StringVar(&in.ChatID, "chat-id", "", "Telegram chat id")
	fs.StringVar(&in.Host, "host", "", "SMTP host")
	fs.IntVar(&in.Port, "port", 0, "SMTP port")
	fs.StringVar(&in.TLS, "tls", "", "starttls or tls")
	fs.StringVar(&in.From, "from", "", "sender address")
	fs.StringVar(&in.To, "to", "", "recipient address")
	fs.StringVar(&in.Username, "username", "", "SMTP user")
	fs.StringVar(&in.Password, "password", "", "SMTP password (- reads stdin)")
	names, err := parseFlags(fs, args, channelsUsage, 1, 1)
	if err != nil {
		return err
	}
	in.Name = names[0]
	stdin := bufio.NewReader(e.stdin)
	for _, p := range []*string{&in.Token, &in.Password} {
		if *p == "-" {
			line, _ := stdin.ReadString('\n')
			*p = strings.TrimSpace(line)
		}
	}
	if in.Kind == channel.Slack && in.URL == "-" {
		line, _ := stdin.ReadString('\n')
		in.URL = strings.TrimSpace(line)
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		v, err := a.Channels.Add(ctx, owners[0], in)
		if err != nil {
			return fmt.Errorf("channels add: %w", err)
		}
		b, _ := json.Marshal(v)
		fmt.Fprintln(e.stdout, string(b))
		return nil
	})
}

func channelsList(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("channels list", flag.ContinueOnError)
	owner := ownerFlag(fs)
	if _, err := parseFlags(fs, args, channelsUsage, 0, 0); err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		list, err := a.Channels.List(ctx, owners[0])
		if err != nil {
			return fmt.Errorf("channels list: %w", err)
		}
		for _, v := range list {
			b, _ := json.Marshal(v)
			fmt.Fprintln(e.stdout, string(b))
		}
		return nil
	})
}

func channelsRemove(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("channels remove", flag.ContinueOnError)
	owner := ownerFlag(fs)
	names, err := parseFlags(fs, args, channelsUsage, 1, 1)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		if err := a.Channels.Remove(ctx, owners[0], names[0]); err != nil {
			return fmt.Errorf("channels remove: %w", err)
		}
		fmt.Fprintf(e.stdout, "removed channel %s\n", names[0])
		return nil
	})
}

func channelsTest(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("channels test", flag.ContinueOnError)
	owner := ownerFlag(fs)
	names, err := parseFlags(fs, args, channelsUsage, 1, 1)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		res, err := a.Channels.Test(ctx, owners[0], names[0])
		if err != nil {
			return fmt.Errorf("channels test: %w", err)
		}
		b, _ := json.Marshal(res)
		fmt.Fprintln(e.stdout, string(b))
		if !res.Delivered {
			return exitError{code: 1, msg: fmt.Sprintf("the test message to %s was not delivered: %s", names[0], res.Error)}
		}
		return nil
	})
}

func channelsDefault(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("channels default", flag.ContinueOnError)
	owner := ownerFlag(fs)
	names, err := parseFlags(fs, args, channelsUsage, 1, 1)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		v, err := a.Channels.MakeDefault(ctx, owners[0], names[0])
		if err != nil {
			return fmt.Errorf("channels default: %w", err)
		}
		b, _ := json.Marshal(v)
		fmt.Fprintln(e.stdout, string(b))
		return nil
	})
}
