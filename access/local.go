package access

import (
	"os"
	"os/user"
	"strings"
)

// EnvPerson is who a command on this machine works for when no one is named, as the
// environment says: $USER, else $USERNAME; "" when neither is set. A command that only
// needs to know the server's own person (members, tokens) takes it as it is, without the
// system account's fallback (AccountPerson) or a word on stderr.
func EnvPerson() string {
	if v := os.Getenv("USER"); v != "" {
		return v
	}
	return os.Getenv("USERNAME")
}

// AccountPerson is the name of the system account the process runs as, for a process whose
// environment names no one (a service, a container), when it can be a person's id: not
// with a ':' or a '\' (a Windows DOMAIN\user); else "".
func AccountPerson() string {
	if u, err := user.Current(); err == nil && u.Username != "" && !strings.ContainsAny(u.Username, `:\`) {
		return u.Username
	}
	return ""
}
