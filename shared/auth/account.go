package auth

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Account is a storage account and its keys. Keys holds the base64-decoded
// keys: one, or two when the account rotates keys (Azure's key1 and key2);
// a signature made with either key is accepted.
type Account struct {
	Name string
	Keys [][]byte
}

// maxKeysPerAccount mirrors Azure, where an account has a primary and a
// secondary key.
const maxKeysPerAccount = 2

// DevStoreAccountName and DevStoreAccountKey are the storage emulator's
// well-known development account. The key is public (it is printed in the
// Azure documentation and every SDK), so it only suits local use.
const (
	DevStoreAccountName = "devstoreaccount1"
	DevStoreAccountKey  = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// DevStoreAccount returns the emulator's well-known account, so the SDKs'
// "UseDevelopmentStorage=true" connection strings work against a local
// server. Never use it for a deployment reachable by others.
func DevStoreAccount() Account {
	key, err := base64.StdEncoding.DecodeString(DevStoreAccountKey)
	if err != nil {
		// The constant is valid base64; a failure here is a programming
		// error caught by the package tests, so return an account without
		// keys, which NewVerifier refuses.
		return Account{Name: DevStoreAccountName}
	}
	return Account{Name: DevStoreAccountName, Keys: [][]byte{key}}
}

// ParseAccountFlag parses one "name:base64key" flag value. The key is
// decoded with standard base64, as the SDKs decode it.
func ParseAccountFlag(s string) (Account, error) {
	name, key, ok := strings.Cut(s, ":")
	if !ok {
		return Account{}, errors.New(`auth: account must be "name:base64key"`)
	}
	if err := validateAccountName(name); err != nil {
		return Account{}, err
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(key))
	if err != nil {
		return Account{}, fmt.Errorf("auth: key of account %q is not base64: %w", name, err)
	}
	if len(raw) == 0 {
		return Account{}, fmt.Errorf("auth: key of account %q is empty", name)
	}
	return Account{Name: name, Keys: [][]byte{raw}}, nil
}

// AccountList is a repeatable command-line flag (it implements flag.Value):
// each occurrence is "name:base64key", and naming an account a second time
// adds its second key.
type AccountList []Account

// String lists the account names; keys are never printed.
func (l *AccountList) String() string {
	if l == nil {
		return ""
	}
	names := make([]string, len(*l))
	for i, a := range *l {
		names[i] = a.Name
	}
	return strings.Join(names, ",")
}

// Set parses one flag occurrence and merges it into the list.
func (l *AccountList) Set(s string) error {
	a, err := ParseAccountFlag(s)
	if err != nil {
		return err
	}
	for i := range *l {
		if (*l)[i].Name != a.Name {
			continue
		}
		if len((*l)[i].Keys) >= maxKeysPerAccount {
			return fmt.Errorf("auth: account %q already has %d keys", a.Name, maxKeysPerAccount)
		}
		(*l)[i].Keys = append((*l)[i].Keys, a.Keys...)
		return nil
	}
	*l = append(*l, a)
	return nil
}

// validateAccountName applies Azure's storage account naming rule: 3 to 24
// lowercase letters and digits. Account names appear in every
// string-to-sign, so a name the SDKs would never produce is refused early.
func validateAccountName(name string) error {
	if len(name) < 3 || len(name) > 24 {
		return fmt.Errorf("auth: account name %q must be 3 to 24 characters", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return fmt.Errorf("auth: account name %q may hold only lowercase letters and digits", name)
		}
	}
	return nil
}
