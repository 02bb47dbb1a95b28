# SPDX-License-Identifier: MIT
# AllowedDomains (issue #50): a PrivateNetwork=yes job reaches the names
# its list holds, over HTTP and HTTPS, through a proxy bgrun runs for it
# outside its network, and nothing else. The names come from the
# sandbox's /etc/hosts (tools/sandbox.d/init) and resolve to this
# loopback, which only a name listed exactly may reach; no packet leaves
# the machine.

PORT=18780
ORIGIN=origin.bgrun.test:$PORT

# An HTTP server on the host's loopback (clients/origin-server.py), serving
# hello.txt and what a test puts in $ORIGIN_DIR; its requests logged to
# $ORIGIN_LOG ("GET /path"). Killed, by pid, when the test ends.
origin() {
	ORIGIN_DIR=$(mktemp -d)
	ORIGIN_LOG=$ORIGIN_DIR.log
	echo "hello from the origin" >"$ORIGIN_DIR/hello.txt"
	python3 "$CLIENTS_DIR/origin-server.py" $PORT "$ORIGIN_DIR" >"$ORIGIN_LOG" 2>&1 &
	local pid=$!
	# Gone before the next test's binds the port.
	on_exit "kill $pid; wait $pid; rm -rf $ORIGIN_DIR $ORIGIN_LOG"
	wait_until 10 curl -sf --noproxy '*' "http://127.0.0.1:$PORT/hello.txt" || fail "the origin did not start"
}

# A command printing what a request through the job's proxy answers: its
# body, then its status on a line of its own (the bodies end in a newline).
fetch_code() { # URL
	echo "curl -s -w %{http_code} $1"
}

test_a_listed_name_is_reached_and_nothing_else() {
	origin
	local out
	out=$(bgrun run --wait -q -C / --allow-domain "$ORIGIN" -- "curl -sS http://$ORIGIN/hello.txt") || fail "curl: $out"
	assert_eq "hello from the origin" "$out" "curl through the proxy"
	out=$(bgrun run --wait -q -C / --allow-domain "$ORIGIN" -- \
		"python3 -c 'import urllib.request; print(urllib.request.urlopen(\"http://$ORIGIN/hello.txt\").read().decode().strip())'") ||
		fail "urllib: $out"
	assert_eq "hello from the origin" "$out" "Python's urllib through the proxy"
	# Without the proxy there is no way out: no DNS, no route.
	out=$(bgrun run --wait -q -C / --allow-domain "$ORIGIN" -- "curl -sS --noproxy '*' http://127.0.0.1:$PORT/hello.txt 2>&1; echo \$?")
	assert_contains "$out" "Failed to connect" "a direct connection"
	out=$(bgrun run --wait -q -C / --allow-domain "$ORIGIN" -- 'echo $HTTP_PROXY $https_proxy $NO_PROXY $NODE_USE_ENV_PROXY')
	[[ $out =~ ^http://127\.0\.0\.1:([0-9]+)\ http://127\.0\.0\.1:([0-9]+)\ localhost,127\.0\.0\.1,::1\ 1$ ]] ||
		fail "the job's proxy variables: $out"
	[[ ${BASH_REMATCH[1]} != 0 && ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]] || fail "the proxy's port: $out"
}

test_a_name_not_listed_is_refused_and_recorded() {
	origin
	local id out
	id=$(bgrun run -q -C / --allow-domain "$ORIGIN" -- \
		"$(fetch_code "http://other.bgrun.test:$PORT/"); $(fetch_code "http://other.bgrun.test:$PORT/x"); curl -s --noproxy none.invalid -w %{http_code} http://127.0.0.1:$PORT/") ||
		fail "the job did not launch"
	bgrun wait "$id" >/dev/null
	out=$(bgrun logs "$id")
	assert_contains "$out" "other.bgrun.test:$PORT is not in this job's AllowedDomains (--allow-domain other.bgrun.test:$PORT would allow it)" "the refusal's body"
	assert_contains "$out" $'\n403' "its status"
	assert_eq '{"other.bgrun.test":2,"(invalid)":1}' "$(jget "$id" .network_denied | jq -c .)" "the record's network_denied"
	out=$(bgrun status "$id")
	assert_contains "$out" "other.bgrun.test (2×)" "bgrun status"
	assert_eq 1 "$(grep -c 'GET /' "$ORIGIN_LOG")" "a refused request reached the origin: $(cat "$ORIGIN_LOG")"
	# A job without the option has an empty one.
	id=$(bgrun run -q -C / -p PrivateNetwork=yes -- true)
	bgrun wait "$id" >/dev/null
	assert_eq '{}' "$(jget "$id" .network_denied | jq -c .)" "without AllowedDomains"
}

test_a_wildcard_never_reaches_a_private_address() {
	origin
	local out
	out=$(bgrun run --wait -q -C / --allow-domain "*.wild.bgrun.test:$PORT" -- "$(fetch_code "http://a.wild.bgrun.test:$PORT/hello.txt")")
	assert_contains "$out" "a.wild.bgrun.test has only loopback, link-local or private addresses" "by a wildcard"
	assert_contains "$out" $'\n403'
	# The same name listed exactly reaches it.
	out=$(bgrun run --wait -q -C / --allow-domain "a.wild.bgrun.test:$PORT" -- "$(fetch_code "http://a.wild.bgrun.test:$PORT/hello.txt")")
	assert_eq $'hello from the origin\n200' "$out" "listed exactly"
}

# A wildcard reaches a host at an address that is not private: one in a
# network namespace the test makes (198.18.0.2, at the end of a veth pair;
# b.wild.bgrun.test in the sandbox's /etc/hosts), and of a name with both
# kinds of address (both.wild.bgrun.test: 127.0.0.1 too), that one only.
# The namespace, and with it the pair, goes when the test's mount of it does.
test_a_wildcard_reaches_a_public_address() {
	command -v ip >/dev/null || skip "no ip (iproute2)"
	origin # 127.0.0.1:$PORT: what a wildcard must never reach
	local ns=bgrun-wild-$$ dir out
	ip netns add "$ns" 2>/dev/null || skip "cannot make a network namespace (CAP_SYS_ADMIN)"
	on_exit "ip netns delete $ns"
	ip link add bgrun-w$$ type veth peer name bgrun-w$$p netns "$ns" 2>/dev/null ||
		skip "cannot make a veth pair (CAP_NET_ADMIN)"
	ip addr add 198.18.0.1/30 dev bgrun-w$$
	ip link set bgrun-w$$ up
	ip -n "$ns" addr add 198.18.0.2/30 dev bgrun-w$$p
	ip -n "$ns" link set bgrun-w$$p up
	ip -n "$ns" link set lo up
	dir=$(mktemp -d)
	echo "hello from the namespace" >"$dir/hello.txt"
	ip netns exec "$ns" python3 "$CLIENTS_DIR/origin-server.py" 80 "$dir" 198.18.0.2 >/dev/null 2>&1 &
	local pid=$!
	on_exit "kill $pid"
	ip netns exec "$ns" python3 "$CLIENTS_DIR/origin-server.py" $PORT "$dir" 198.18.0.2 >/dev/null 2>&1 &
	pid=$!
	on_exit "kill $pid; rm -rf $dir"
	wait_until 10 curl -sf --noproxy '*' http://198.18.0.2/hello.txt || fail "the namespace's origin did not start"
	wait_until 10 curl -sf --noproxy '*' http://198.18.0.2:$PORT/hello.txt || fail "the namespace's origin did not start"
	out=$(bgrun run --wait -q -C / --allow-domain '*.wild.bgrun.test' -- "$(fetch_code http://b.wild.bgrun.test/hello.txt)")
	assert_eq $'hello from the namespace\n200' "$out" "a wildcard's host at a public address"
	out=$(bgrun run --wait -q -C / --allow-domain '*.wild.bgrun.test' -- "$(fetch_code http://wild.bgrun.test/hello.txt)")
	assert_contains "$out" $'\n403' "the wildcard's own name is not its subdomain"
	out=$(bgrun run --wait -q -C / --allow-domain "*.wild.bgrun.test:$PORT" -- \
		"for i in 1 2 3 4 5; do curl -s http://both.wild.bgrun.test:$PORT/hello.txt; done | sort | uniq -c")
	assert_eq "      5 hello from the namespace" "$out" "a name with a loopback and a public address, by a wildcard"
	out=$(bgrun run --wait -q -C / --allow-domain "both.wild.bgrun.test:$PORT" -- \
		"for i in 1 2 3 4 5; do curl -s http://both.wild.bgrun.test:$PORT/hello.txt; done | sort -u")
	assert_eq "hello from the origin" "$out" "the same name listed exactly: its first address, the loopback's"
}

test_connect_tunnels_to_listed_ports_only() {
	origin
	local out
	out=$(bgrun run --wait -q -C / --allow-domain "$ORIGIN" -- "curl -sS -p http://$ORIGIN/hello.txt") || fail "CONNECT: $out"
	assert_eq "hello from the origin" "$out" "through a CONNECT tunnel"
	out=$(bgrun run --wait -q -C / --allow-domain "$ORIGIN" -- "curl -sS -p http://origin.bgrun.test:22/ 2>&1")
	assert_contains "$out" "CONNECT tunnel failed, response 403" "CONNECT to a port the list does not name"
}

# Requests a hostile job sends its proxy: each refused, none reaches the
# origin past what its list allows.
test_hostile_requests_are_refused() {
	origin
	local probe out
	probe=$(cat <<PY
import os, socket
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
def ask(raw):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(raw)
    data = b""
    while True:
        d = s.recv(65536)
        if not d: break
        data += d
    return data
def status(raw):
    return ask(raw).split(b"\r\n", 1)[0].decode()
o = b"origin.bgrun.test:$PORT"
print("smuggling", status(b"POST http://" + o + b"/ HTTP/1.1\r\nHost: " + o + b"\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"))
print("host differs", status(b"GET http://" + o + b"/ HTTP/1.1\r\nHost: other.bgrun.test:$PORT\r\n\r\n"))
print("bare CR", status(b"GET http://" + o + b"/ HTTP/1.1\r\nHost: " + o + b"\r\nX: a\rb\r\n\r\n"))
print("bare LF", status(b"GET http://" + o + b"/ HTTP/1.1\nHost: " + o + b"\n\n"))
print("two lengths", status(b"POST http://" + o + b"/ HTTP/1.1\r\nHost: " + o + b"\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"))
print("big head", status(b"GET http://" + o + b"/ HTTP/1.1\r\nHost: " + o + b"\r\nX: " + b"a" * 17000 + b"\r\n\r\n"))
print("origin-form", status(b"GET /hello.txt HTTP/1.1\r\nHost: " + o + b"\r\n\r\n"))
print("CONNECT port", status(b"CONNECT origin.bgrun.test:22 HTTP/1.1\r\nHost: origin.bgrun.test:22\r\n\r\n"))
both = ask(b"GET http://" + o + b"/hello.txt HTTP/1.1\r\nHost: " + o + b"\r\n\r\nGET http://" + o + b"/second HTTP/1.1\r\nHost: " + o + b"\r\n\r\n")
print("pipelined", both.count(b"HTTP/1."), b"Connection: close" in both)
PY
)
	local before
	before=$(grep -c 'GET /' "$ORIGIN_LOG") # origin()'s own
	out=$(bgrun run --wait -q -C / --allow-domain "$ORIGIN" -- "python3 -c '$probe'") || fail "the probe: $out"
	assert_eq "smuggling HTTP/1.1 400 Bad Request
host differs HTTP/1.1 400 Bad Request
bare CR HTTP/1.1 400 Bad Request
bare LF HTTP/1.1 400 Bad Request
two lengths HTTP/1.1 400 Bad Request
big head HTTP/1.1 431 Request Header Fields Too Large
origin-form HTTP/1.1 400 Bad Request
CONNECT port HTTP/1.1 403 Forbidden
pipelined 1 True" "$out" "what the proxy answers"
	# Only the first of the pipelined requests was passed on.
	assert_eq $((before + 1)) "$(grep -c 'GET /' "$ORIGIN_LOG")" "requests the origin saw: $(cat "$ORIGIN_LOG")"
	grep -q "GET /second" "$ORIGIN_LOG" && fail "a request after the first on a connection reached the origin"
	return 0
}

test_bad_entries_are_invalid_args() {
	local bad
	for bad in 127.0.0.1 '*' '*.com' example.com:0 'exämple.com' '[::1]' Example.com; do
		expect_fail bgrun run -q -C / --allow-domain "$bad" -- touch /tmp/bgrun-domains-ran
		assert_contains "$ERR_OUT" "AllowedDomains" "the error for '$bad'"
	done
	expect_fail gcall Launch "'touch /tmp/bgrun-domains-ran'" "''" "'/'" "{'AllowedDomains': <['example.com']>}"
	assert_contains "$ERR_OUT" "InvalidArgs"
	assert_contains "$ERR_OUT" "PrivateNetwork"
	local many=() i
	for i in $(seq 65); do many+=(--allow-domain "h$i.example.com"); done
	expect_fail bgrun run -q -C / "${many[@]}" -- touch /tmp/bgrun-domains-ran
	assert_contains "$ERR_OUT" "AllowedDomains"
	expect_fail bgrun run -q -C / --network --allow-domain example.com -- true
	assert_contains "$ERR_OUT" "--network and --allow-domain cannot be combined"
	[[ ! -e /tmp/bgrun-domains-ran ]] || fail "a refused job ran"
}

# The proxy is the job's: in its unit's cgroup, as its user, with no
# capability, no new privileges and a seccomp filter; gone with the job.
test_the_proxy_is_the_jobs_and_confined() {
	setup_users
	local id pid cgroup
	id=$(as_user alice "$BGRUN" run -q -C / --allow-domain example.com -- sleep 60) || fail "the job did not launch"
	on_exit "bgrun kill $id >/dev/null 2>&1"
	wait_until 10 pgrep -x bgrun-proxy || fail "no proxy runs"
	pid=$(pgrep -x bgrun-proxy)
	cgroup=$(jget "$id" .containment.cgroup)
	[[ $(grep '^0::' "/proc/$pid/cgroup" | cut -d: -f3) == "${cgroup%/*}/"* ]] ||
		fail "the proxy's cgroup $(cat /proc/$pid/cgroup) is not the job's ($cgroup)"
	assert_eq "$(id -u alice)" "$(stat -c %u /proc/$pid)" "the proxy's user"
	assert_eq "CapEff:	0000000000000000" "$(grep CapEff "/proc/$pid/status")"
	assert_eq "NoNewPrivs:	1" "$(grep NoNewPrivs "/proc/$pid/status")"
	assert_eq "Seccomp:	2" "$(grep '^Seccomp:' "/proc/$pid/status")"
	bgrun kill "$id" >/dev/null
	wait_until 10 bash -c '! pgrep -x bgrun-proxy' || fail "the proxy outlived its job"
}

# An unprivileged bgrund's jobs: the same proxy, as the user.
test_the_user_instance_has_the_proxy() {
	origin
	ensure_user alice
	local out
	out=$(bgrun-sandbox-login alice -- bash -c "
		bgrun --user run --wait -q -C ~ --allow-domain $ORIGIN -- 'curl -sS http://$ORIGIN/hello.txt'
		bgrun --user run --wait -q -C ~ --allow-domain $ORIGIN -- '$(fetch_code "http://other.bgrun.test:$PORT/")' | tail -n 1" 2>&1)
	assert_eq $'hello from the origin\n403' "$out" "alice's jobs in her --user instance"
}

# bgrun mcp --sandbox workspace --allow-domain: every run reaches the
# floor's names and nothing else, and its result carries what was refused.
test_mcp_runs_reach_the_floors_names() {
	origin
	local ws=/root/mcp-domains-$$ out
	mkdir -p "$ws"
	on_exit "rm -rf $ws"
	out=$(cd "$ws" && python3 - "$ORIGIN" "$PORT" <<'PY'
import json, subprocess, sys
origin, port = sys.argv[1], sys.argv[2]
p = subprocess.Popen(["bgrun", "mcp", "--sandbox", "workspace", "--allow-domain", origin],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def send(m):
    p.stdin.write(json.dumps(m) + "\n"); p.stdin.flush()
def answer(i):
    for line in p.stdout:
        m = json.loads(line)
        if m.get("id") == i:
            return m
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
      "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
answer(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
def run(i, command, **args):
    send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
          "params": {"name": "run", "arguments": dict(command=command, wait_sec=20, **args)}})
    return answer(i)["result"]
r = run(2, f"curl -sS http://{origin}/hello.txt; curl -s -w %{{http_code}} http://other.bgrun.test:{port}/")
s = r["structuredContent"]
print(s["output"].splitlines()[0], s["output"].splitlines()[-1], json.dumps(s.get("network_denied")), s["sandbox"])
print([l for l in r["content"][0]["text"].splitlines() if "refused" in l][0])
r = run(3, "true", network=True)
print("network asked:", r.get("isError"), r["content"][0]["text"])
p.stdin.close()
p.wait()
PY
	) || fail "the MCP client: $out"
	assert_eq "hello from the origin 403 {\"other.bgrun.test\": 1} workspace
The sandbox refused these hosts (not in its allowed domains): other.bgrun.test (1x). Ask the user to allow them; do not retry without the sandbox.
network asked: True This server runs every command in the sandbox 'workspace' (reaching only the names it allows, over HTTP(S)): a run may not ask for the network." "$out" "the runs of bgrun mcp --allow-domain"
	out=$(bgrun mcp --allow-domain example.com </dev/null 2>&1) && fail "--allow-domain without --sandbox was taken"
	assert_contains "$out" "--allow-domain goes with --sandbox"
	out=$(bgrun mcp --sandbox workspace --allow-domain 10.0.0.1 </dev/null 2>&1) && fail "an address was taken"
	assert_contains "$out" "Invalid --allow-domain '10.0.0.1'"
}

# Real clients, each through the proxy to a listed host and refused for
# one that is not: git over http:// (git http-backend), pip from a simple
# index, npm from a registry's documents.
test_git_clones_through_the_proxy() {
	origin
	local repo=$ORIGIN_DIR/git/app.git out
	git init -q --bare "$repo"
	git -C "$ORIGIN_DIR" init -q work
	git -C "$ORIGIN_DIR/work" -c user.name=t -c user.email=t@t commit -q --allow-empty -m "the first commit"
	git -C "$ORIGIN_DIR/work" push -q "$repo" HEAD:refs/heads/main
	git -C "$repo" symbolic-ref HEAD refs/heads/main
	out=$(bgrun run --wait -q -C / --allow-domain "$ORIGIN" -- \
		"git clone -q http://$ORIGIN/git/app.git /tmp/bgrun-clone-\$\$ && git -C /tmp/bgrun-clone-\$\$ log --format=%s; rm -rf /tmp/bgrun-clone-\$\$") ||
		fail "git clone: $out"
	assert_eq "the first commit" "$out" "git clone over http:// through the proxy"
	grep -q "POST /git/app.git/git-upload-pack" "$ORIGIN_LOG" || fail "not git's smart protocol: $(cat "$ORIGIN_LOG")"
	out=$(bgrun run --wait -q -C / --allow-domain "$ORIGIN" -- "git clone -q http://other.bgrun.test:$PORT/git/app.git /tmp/x 2>&1")
	assert_contains "$out" "403" "git clone from a host not listed"
}

test_pip_downloads_through_the_proxy() {
	python3 -m pip --version >/dev/null 2>&1 || skip "no pip (python3-pip)"
	origin
	# A wheel of one module, and a simple index naming it.
	local wheel=tinypkg-1.0-py3-none-any.whl out
	mkdir -p "$ORIGIN_DIR/simple/tinypkg" "$ORIGIN_DIR/files"
	(cd "$ORIGIN_DIR/files" && python3 - "$wheel" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("tinypkg/__init__.py", "NAME = 'tinypkg'\n")
    z.writestr("tinypkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n")
    z.writestr("tinypkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("tinypkg-1.0.dist-info/RECORD", "")
PY
	)
	echo "<html><body><a href=\"/files/$wheel#sha256=$(sha256sum "$ORIGIN_DIR/files/$wheel" | cut -d' ' -f1)\">$wheel</a></body></html>" \
		>"$ORIGIN_DIR/simple/tinypkg/index.html"
	local pip="env -u PIP_FIND_LINKS -u PIP_INDEX_URL python3 -m pip download --no-cache-dir --disable-pip-version-check --no-deps --retries 0 --timeout 10"
	out=$(bgrun run --wait -q -C / --allow-domain "$ORIGIN" -- \
		"d=\$(mktemp -d) && $pip -q --index-url http://$ORIGIN/simple/ --trusted-host origin.bgrun.test -d \$d tinypkg && ls \$d; rm -rf \$d") ||
		fail "pip download: $out"
	assert_eq "$wheel" "$out" "pip download through the proxy"
	# pip says no more than "not found" for a page it could not get: the
	# record says why.
	local id
	id=$(bgrun run -q -C / --allow-domain "$ORIGIN" -- \
		"d=\$(mktemp -d); $pip --index-url http://other.bgrun.test:$PORT/simple/ --trusted-host other.bgrun.test -d \$d tinypkg 2>&1; rm -rf \$d")
	bgrun wait "$id" >/dev/null
	assert_contains "$(bgrun logs "$id")" "No matching distribution found for tinypkg" "pip from a host not listed"
	assert_eq 1 "$(jget "$id" '.network_denied["other.bgrun.test"] > 0 | if . then 1 else 0 end')" "the record's network_denied"
}

test_npm_installs_through_the_proxy() {
	command -v npm >/dev/null || skip "no npm"
	origin
	# A registry's package document and tarball, as files.
	local tgz=$ORIGIN_DIR/tinypkg/-/tinypkg-1.0.0.tgz out work
	mkdir -p "$ORIGIN_DIR/tinypkg/-" "$ORIGIN_DIR/src/package"
	echo '{"name":"tinypkg","version":"1.0.0","main":"index.js"}' >"$ORIGIN_DIR/src/package/package.json"
	echo 'module.exports = "tinypkg from the registry";' >"$ORIGIN_DIR/src/package/index.js"
	tar -czf "$tgz" -C "$ORIGIN_DIR/src" package
	python3 - "$tgz" "http://$ORIGIN" >"$ORIGIN_DIR/tinypkg/index.html" <<'PY'
import base64, hashlib, json, sys
data = open(sys.argv[1], "rb").read()
version = {"name": "tinypkg", "version": "1.0.0", "main": "index.js",
           "dist": {"tarball": sys.argv[2] + "/tinypkg/-/tinypkg-1.0.0.tgz", "shasum": hashlib.sha1(data).hexdigest(),
                    "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()}}
print(json.dumps({"name": "tinypkg", "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": version}}))
PY
	work=$(mktemp -d)
	on_exit "rm -rf $work"
	local npm="npm install --no-audit --no-fund --no-update-notifier --cache $work/cache --fetch-retries 0"
	out=$(bgrun run --wait -q -C "$work" --allow-domain "$ORIGIN" -- \
		"$npm --registry http://$ORIGIN/ tinypkg >/dev/null && node -e 'console.log(require(\"tinypkg\"))'") ||
		fail "npm install: $out"
	assert_eq "tinypkg from the registry" "$out" "npm install through the proxy"
	out=$(bgrun run --wait -q -C "$work" --allow-domain "$ORIGIN" -- \
		"$npm --registry http://other.bgrun.test:$PORT/ tinypkg 2>&1")
	assert_contains "$out" "403" "npm from a host not listed"
}

# A session's jobs share a network only with the same names: a sibling
# never reaches another list's proxy (or its servers) through the session.
test_a_session_shares_its_network_only_with_the_same_names() {
	local server client id out
	server="python3 -c 'import socket
s = socket.socket(); s.bind((\"127.0.0.1\", 18782)); s.listen(); print(\"listening\", flush=True)
while True: s.accept()[0].sendall(b\"hello\")'"
	client="python3 -c 'import socket
try: print(socket.create_connection((\"127.0.0.1\", 18782), timeout=3).recv(8).decode())
except OSError: print(\"unreachable\")'"
	id=$(bgrun run -q -C / -s names --allow-domain example.com -- "$server") || fail "the server"
	on_exit "bgrun kill $id >/dev/null 2>&1"
	wait_until 10 bash -c "bgrun logs $id | grep -q listening" || fail "the server did not listen"
	assert_eq hello "$(bgrun run --wait -q -C / -s names --allow-domain example.com -- "$client")" "the same names"
	assert_eq unreachable "$(bgrun run --wait -q -C / -s names --allow-domain example.org -- "$client")" "other names"
	assert_eq unreachable "$(bgrun run --wait -q -C / -s names -p PrivateNetwork=yes -- "$client")" "no names"
	assert_eq session "$(jget "$id" .sandbox.network)"
}

# What a hostile job does to its proxy costs that job alone: 300 slow
# connections (heads never finished) fill its proxy's 256 and no more, in
# bounded memory, while another job's proxy answers at once.
test_a_flood_of_connections_costs_only_its_own_job() {
	origin
	local id pid out fds rss
	id=$(bgrun run -q -C / --allow-domain "$ORIGIN" -- "python3 -c 'import os, socket, time
port = int(os.environ[\"HTTP_PROXY\"].rsplit(\":\", 1)[1])
held = []
for i in range(300):
    s = socket.socket(); s.setblocking(False)
    try: s.connect((\"127.0.0.1\", port))
    except BlockingIOError: pass
    held.append(s)
time.sleep(1)
for s in held:
    try: s.send(b\"GET http://$ORIGIN/ HTTP/1.1\\r\\nX: \")
    except OSError: pass
print(\"flooding\", flush=True)
time.sleep(120)'") || fail "the flood did not launch"
	on_exit "bgrun kill $id >/dev/null 2>&1"
	wait_until 20 bash -c "bgrun logs $id | grep -q flooding" || fail "the flood did not start: $(bgrun logs "$id")"
	pid=$(pgrep -x bgrun-proxy) || fail "no proxy"
	fds=$(ls "/proc/$pid/fd" | wc -l)
	assert_le "$fds" $((256 + 16)) "the flooded proxy's descriptors"
	rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
	assert_le "$rss" $((64 * 1024)) "the flooded proxy's memory (KiB)"
	out=$(bgrun run --wait -q -C / --allow-domain "$ORIGIN" -- "curl -sS -m 5 http://$ORIGIN/hello.txt") || fail "another job: $out"
	assert_eq "hello from the origin" "$out" "another job's proxy, during the flood"
}
