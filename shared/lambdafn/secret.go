package lambdafn

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/oauth"
)

// The account keys secret is JSON. CloudFormation generates it at deploy
// (AWS::SecretsManager::Secret GenerateSecretString): GenerateSecretString
// makes one random string per secret, so it makes 176 letters and digits
// under "keys" and the two keys are its halves, 88 characters each. A
// string of letters and digits whose length is a multiple of 4 is valid
// base64 in every decoder; 88 characters decode to 66 bytes, about the
// 64 random bytes of an Azure key (88 base64 characters too).
//
//	{"accountName": "myaccount", "keys": "<176 letters and digits>"}
//
// An operator may instead set the keys explicitly, in Azure's own form,
// for example to rotate one key at a time:
//
//	{"accountName": "myaccount", "key1": "<base64>", "key2": "<base64>"}
//
// key1 and key2 win over keys. A signature made with either key is
// accepted, as Azure accepts its key1 and key2.
//
// It may also hold bearer token role assignments (the "roles" of
// shared/oauth.Config), which add to TABLEBRIDGE_OAUTH_ROLES:
//
//	{..., "oauthRoles": [{"claim": "oid", "value": "<object id>", "role": "contributor", "account": "myaccount"}]}
type keySecret struct {
	AccountName string             `json:"accountName"`
	Keys        string             `json:"keys"`
	Key1        string             `json:"key1"`
	Key2        string             `json:"key2"`
	OAuthRoles  []oauth.Assignment `json:"oauthRoles"`
}

// generatedKeysLen is the length of the generated "keys" string: two keys.
const generatedKeysLen = 176

// minKeyBytes refuses keys too short for HMAC-SHA256 to be worth anything.
const minKeyBytes = 32

// parseSecret reads the keys secret: the account and any role assignments.
func parseSecret(secret, account string) (auth.Account, []oauth.Assignment, error) {
	var s keySecret
	if err := json.Unmarshal([]byte(secret), &s); err != nil {
		return auth.Account{}, nil, fmt.Errorf("lambdafn: the account keys secret is not JSON: %w", err)
	}
	acc, err := s.account(account)
	return acc, s.OAuthRoles, err
}

func (s *keySecret) account(account string) (auth.Account, error) {
	if s.AccountName != "" && s.AccountName != account {
		return auth.Account{}, fmt.Errorf("lambdafn: the account keys secret is for account %q, not %q", s.AccountName, account)
	}
	var texts []string
	switch {
	case s.Key1 != "" || s.Key2 != "":
		for _, k := range []string{s.Key1, s.Key2} {
			if k != "" {
				texts = append(texts, k)
			}
		}
	case len(s.Keys) == generatedKeysLen:
		texts = []string{s.Keys[:generatedKeysLen/2], s.Keys[generatedKeysLen/2:]}
	case s.Keys != "":
		return auth.Account{}, fmt.Errorf("lambdafn: the account keys secret's \"keys\" has %d characters, want %d (two keys)", len(s.Keys), generatedKeysLen)
	default:
		return auth.Account{}, errors.New(`lambdafn: the account keys secret has no "keys", "key1" or "key2"`)
	}
	acc := auth.Account{Name: account}
	for i, t := range texts {
		k, err := base64.StdEncoding.DecodeString(t)
		if err != nil {
			return auth.Account{}, fmt.Errorf("lambdafn: account key %d is not base64: %w", i+1, err)
		}
		if len(k) < minKeyBytes {
			return auth.Account{}, fmt.Errorf("lambdafn: account key %d has %d bytes, want at least %d", i+1, len(k), minKeyBytes)
		}
		acc.Keys = append(acc.Keys, k)
	}
	return acc, nil
}

// secretsAPI is the part of the Secrets Manager client a function uses.
type secretsAPI interface {
	GetSecretValue(context.Context, *secretsmanager.GetSecretValueInput, ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// fetchAccount reads the keys secret once, at init: the account and any
// bearer token role assignments it holds.
func fetchAccount(ctx context.Context, client secretsAPI, secretID, account string) (auth.Account, []oauth.Assignment, error) {
	out, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(secretID)})
	if err != nil {
		return auth.Account{}, nil, fmt.Errorf("lambdafn: read the account keys secret %s: %w", secretID, err)
	}
	if out.SecretString == nil {
		return auth.Account{}, nil, fmt.Errorf("lambdafn: the account keys secret %s holds binary data, not JSON", secretID)
	}
	acc, roles, err := parseSecret(*out.SecretString, account)
	if err != nil {
		return auth.Account{}, nil, fmt.Errorf("%w (secret %s)", err, secretID)
	}
	return acc, roles, nil
}
