package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/oauth"
)

// oauthFlags configure bearer tokens (Microsoft Entra ID or any OIDC
// issuer) beside Shared Key and SAS.
type oauthFlags struct {
	mode       string
	configPath string
}

func (f *oauthFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mode, "oauth", "", `accept bearer tokens: "basic" (claims checked, signature NOT checked: local development only, like the Azure emulator) or "verified" (signatures checked against the issuers' published keys; needs -oauth-config)`)
	fs.StringVar(&f.configPath, "oauth-config", "", "JSON file of token issuers, audiences and role assignments (see docs/serve.md)")
}

// verifier builds the token verifier, or nil when tokens are off. It says
// at start what the mode means.
func (f *oauthFlags) verifier(ctx context.Context, https bool, out io.Writer) (auth.TokenVerifier, error) {
	var cfg *oauth.Config
	if f.configPath != "" {
		c, err := oauth.LoadConfig(f.configPath)
		if err != nil {
			return nil, err
		}
		cfg = c
	}
	var tv auth.TokenVerifier
	switch f.mode {
	case "":
		if cfg != nil {
			return nil, fmt.Errorf("serve: -oauth-config needs -oauth basic or -oauth verified")
		}
		return nil, nil
	case "basic":
		fmt.Fprintln(out, "WARNING: -oauth basic accepts bearer tokens WITHOUT checking their signature; anyone can make one. Use it for local development only.")
		b, err := oauth.NewBasic(cfg)
		if err != nil {
			return nil, fmt.Errorf("serve: -oauth basic: %w", err)
		}
		tv = b
	case "verified":
		v, err := oauth.NewVerified(cfg, oauth.VerifiedOptions{})
		if err != nil {
			return nil, fmt.Errorf("serve: -oauth verified: %w", err)
		}
		dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		if err := v.Discover(dctx); err != nil {
			fmt.Fprintf(out, "WARNING: %v (tried again on use)\n", err)
		}
		tv = v
	default:
		return nil, fmt.Errorf("serve: -oauth %q: want basic or verified", f.mode)
	}
	if !https {
		fmt.Fprintln(out, "note: the Azure SDKs send bearer tokens over HTTPS only, and tablebridge refuses them over HTTP; add -tls-self-signed or -tls-cert/-tls-key")
	}
	return tv, nil
}
