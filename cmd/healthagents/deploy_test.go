package main

import (
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/healthagents/healthagents/app"
)

// composeFile is the part of compose.yaml the test reads.
type composeFile struct {
	Services map[string]struct {
		Build       any               `yaml:"build"`
		Image       string            `yaml:"image"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Secrets     []string          `yaml:"secrets"`
		Networks    map[string]struct {
			IPv4 string `yaml:"ipv4_address"`
		} `yaml:"networks"`
	} `yaml:"services"`
	Secrets map[string]struct {
		File string `yaml:"file"`
	} `yaml:"secrets"`
}

// knownSettings are the variables the service reads: those
// app.ConfigFromEnv asks for, with the chain settings switched on.
func knownSettings(t *testing.T) map[string]bool {
	t.Helper()
	var mu sync.Mutex
	asked := map[string]bool{}
	record := func(set map[string]string) func(string) string {
		return func(k string) string {
			mu.Lock()
			defer mu.Unlock()
			asked[k] = true
			return set[k]
		}
	}
	_, _ = app.ConfigFromEnv(record(map[string]string{"CHAIN_ENDPOINT": "http://127.0.0.1:8545"}))
	require.True(t, asked["CHAIN_OWNER"] && asked["FERNET_KEY"], "sanity: the settings were recorded")
	return asked
}

// interpolate replaces compose's ${VAR:-default} and ${VAR:?message} with
// vars[VAR], as `docker compose` would with those in .env.
func interpolate(s string, vars map[string]string) string {
	return regexp.MustCompile(`\$\{([A-Z_]+)(?::[-?][^}]*)?\}`).ReplaceAllStringFunc(s, func(m string) string {
		name := regexp.MustCompile(`^\$\{([A-Z_]+)`).FindStringSubmatch(m)[1]
		return vars[name]
	})
}

// TestComposeUsesRealSettings reads compose.yaml and the Dockerfile: every
// variable set on a healthagents container is a setting the service reads
// (a misspelt one would be ignored silently), each replica's settings pass
// app.ConfigFromEnv once .env is filled in, the replicas submit with keys
// of their own, the owner address is the owner key file's, the replicas
// trust the load balancer alone, the shape has PostgreSQL, Redis, a chain
// node and Kubo, and the image is static, multi-stage and non-root.
func TestComposeUsesRealSettings(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../compose.yaml")
	require.NoError(t, err)
	var c composeFile
	require.NoError(t, yaml.Unmarshal(raw, &c))
	known := knownSettings(t)
	env := map[string]string{"FERNET_KEY": "", "ADMIN_TOKEN": "an-admin-token-for-the-test", "CHAIN_REGISTRY": "0x" + strings.Repeat("2", 40)}
	env["FERNET_KEY"] = "cw_0x689RpI-jtRR7oE8h_eQsKImvJapLeSbXpwF4e4="

	var replicas []string
	submitters := map[string]string{}
	for name, s := range c.Services {
		if s.Build == nil {
			continue // not our image
		}
		for k := range s.Environment {
			assert.True(t, known[k], "%s sets %s, which the service does not read", name, k)
		}
		vars := map[string]string{}
		for k, v := range s.Environment {
			vars[k] = interpolate(v, env)
		}
		vars["DATA_DIR"] = t.TempDir()
		_, err := app.ConfigFromEnv(func(k string) string { return vars[k] })
		require.NoError(t, err, "%s's settings", name)
		if len(s.Command) > 0 {
			assert.Equal(t, []string{"chain", "deploy"}, s.Command[:2], "%s is the deploy step", name)
			continue
		}
		replicas = append(replicas, name)
		key := strings.TrimPrefix(vars["CHAIN_PRIVATE_KEY"], "0x")
		_, err = crypto.HexToECDSA(key)
		require.NoError(t, err, "%s's CHAIN_PRIVATE_KEY", name)
		assert.NotContains(t, submitters, key, "%s submits with a key of its own", name)
		submitters[key] = name
		// The load balancer and the replicas (a follower forwards the
		// federated round protocol to the leader), nobody else.
		trusted := []string{c.Services["lb"].Networks["default"].IPv4}
		for other, o := range c.Services {
			if o.Build != nil && len(o.Command) == 0 {
				require.NotEmpty(t, o.Networks["default"].IPv4, "%s has a fixed address", other)
				trusted = append(trusted, o.Networks["default"].IPv4)
			}
		}
		assert.ElementsMatch(t, trusted, strings.Split(vars["TRUSTED_PROXIES"], ","), "%s trusts the load balancer and the replicas alone", name)
		assert.Equal(t, "http://"+name+":8000", vars["REPLICA_URL"], "%s advertises its own address", name)
		assert.Contains(t, s.Secrets, "chain_owner_key")
		owner, err := os.ReadFile("../../" + strings.TrimPrefix(c.Secrets["chain_owner_key"].File, "./"))
		require.NoError(t, err)
		ownerKey, err := crypto.HexToECDSA(strings.TrimPrefix(strings.TrimSpace(string(owner)), "0x"))
		require.NoError(t, err)
		assert.Equal(t, crypto.PubkeyToAddress(ownerKey.PublicKey).Hex(), vars["CHAIN_OWNER"], "CHAIN_OWNER is the owner key file's address")
	}
	assert.Len(t, replicas, 2, "two replicas")
	for _, svc := range []string{"postgres", "redis", "chain", "ipfs", "lb", "deploy"} {
		assert.Contains(t, c.Services, svc)
	}
	assert.Contains(t, c.Services["chain"].Image, "foundry", "an Ethereum development node (Anvil)")
	assert.Contains(t, c.Services["ipfs"].Image, "ipfs/kubo")

	docker, err := os.ReadFile("../../Dockerfile")
	require.NoError(t, err)
	d := string(docker)
	froms := regexp.MustCompile(`(?m)^FROM `).FindAllStringIndex(d, -1)
	require.GreaterOrEqual(t, len(froms), 2, "multi-stage")
	assert.Contains(t, d, "CGO_ENABLED=0", "a static binary")
	final := d[froms[len(froms)-1][0]:]
	user := regexp.MustCompile(`(?m)^USER (\S+)`).FindStringSubmatch(final)
	require.NotNil(t, user, "the final stage names its user")
	assert.NotRegexp(t, `^(0|root)(:|$)`, user[1], "not root")
	assert.Contains(t, final, `ENTRYPOINT ["/usr/local/bin/healthagents"]`)
}

// TestKubernetesManifest reads deploy/kubernetes.yaml: the Deployment's
// variables are settings the service reads, its probes are /readyz and
// /livez, it runs as a non-root user with no privilege escalation, and a
// PodDisruptionBudget keeps a replica through a drain.
func TestKubernetesManifest(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../../deploy/kubernetes.yaml")
	require.NoError(t, err)
	defer f.Close()
	known := knownSettings(t)
	type probe struct {
		HTTPGet struct {
			Path string `yaml:"path"`
		} `yaml:"httpGet"`
	}
	kinds := map[string]bool{}
	dec := yaml.NewDecoder(f)
	for {
		var doc struct {
			Kind string `yaml:"kind"`
			Spec struct {
				Replicas int `yaml:"replicas"`
				Template struct {
					Spec struct {
						SecurityContext struct {
							RunAsNonRoot bool `yaml:"runAsNonRoot"`
							RunAsUser    int  `yaml:"runAsUser"`
						} `yaml:"securityContext"`
						Containers []struct {
							Env []struct {
								Name  string `yaml:"name"`
								Value string `yaml:"value"`
							} `yaml:"env"`
							SecurityContext struct {
								AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
							} `yaml:"securityContext"`
							Readiness probe `yaml:"readinessProbe"`
							Liveness  probe `yaml:"livenessProbe"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		if err := dec.Decode(&doc); err != nil {
			break
		}
		kinds[doc.Kind] = true
		if doc.Kind != "Deployment" {
			continue
		}
		assert.GreaterOrEqual(t, doc.Spec.Replicas, 2)
		pod := doc.Spec.Template.Spec
		assert.True(t, pod.SecurityContext.RunAsNonRoot)
		assert.NotZero(t, pod.SecurityContext.RunAsUser)
		require.Len(t, pod.Containers, 1)
		c := pod.Containers[0]
		expanded := map[string]bool{} // $(NAME) in another variable's value
		for _, e := range c.Env {
			for _, m := range regexp.MustCompile(`\$\(([A-Z_]+)\)`).FindAllStringSubmatch(e.Value, -1) {
				expanded[m[1]] = true
			}
		}
		for _, e := range c.Env {
			assert.True(t, known[e.Name] || expanded[e.Name], "the Deployment sets %s, which the service does not read", e.Name)
			if e.Name == "REPLICA_URL" {
				assert.Equal(t, "http://$(POD_IP):8000", e.Value, "each pod advertises its own address")
			}
		}
		require.NotNil(t, c.SecurityContext.AllowPrivilegeEscalation)
		assert.False(t, *c.SecurityContext.AllowPrivilegeEscalation)
		assert.Equal(t, "/readyz", c.Readiness.HTTPGet.Path)
		assert.Equal(t, "/livez", c.Liveness.HTTPGet.Path)
	}
	for _, k := range []string{"Deployment", "Service", "PodDisruptionBudget"} {
		assert.True(t, kinds[k], "a %s", k)
	}
}

// TestDockerignoreKeepsSecretsOut: .dockerignore keeps the .env that
// docs/deploy.md puts at the repository root, a local DATA_DIR and key files
// out of the build context, and keeps the sources the build embeds (the
// packages' data/ directories) in it. The patterns are matched as Docker
// does for the forms used (* and ? within a segment, ** across segments, a
// match on a directory excluding what is under it).
func TestDockerignoreKeepsSecretsOut(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../.dockerignore")
	require.NoError(t, err)
	var patterns []*regexp.Regexp
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		require.False(t, strings.HasPrefix(line, "!"), "exceptions are not used (this test does not read them)")
		var re strings.Builder
		for i := 0; i < len(line); i++ {
			switch {
			case strings.HasPrefix(line[i:], "**/"):
				re.WriteString("(?:.*/)?")
				i += 2
			case strings.HasPrefix(line[i:], "**"):
				re.WriteString(".*")
				i++
			case line[i] == '*':
				re.WriteString("[^/]*")
			case line[i] == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(line[i : i+1]))
			}
		}
		patterns = append(patterns, regexp.MustCompile("^"+re.String()+"(?:/.*)?$"))
	}
	ignored := func(path string) bool {
		for _, p := range patterns {
			if p.MatchString(path) {
				return true
			}
		}
		return false
	}
	for _, p := range []string{".env", ".env.production", "deploy/.env", "data", "data/fernet.key", "data/healthagents.db",
		"data/chain/owner.key", "deploy/anvil-owner.key", "tls/server.pem", "owner.key", "certs/client.p12", ".git/config"} {
		assert.True(t, ignored(p), "%s stays out of the build context", p)
	}
	for _, p := range []string{"go.mod", "go.sum", "cmd/healthagents/main.go", "eligibility/data/catalogue.json",
		"prescription/data/drugs.json", "store/migrations/0001_init.sql", "pharmacy/internal/contracts/PharmacyOracle.abi"} {
		assert.False(t, ignored(p), "%s is in the build context", p)
	}
}
