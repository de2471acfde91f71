package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

const nodeName = "effect-kube-node"

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// freePort asks the kernel for a free loopback port. Another process can take
// it before our child binds it; that shows as the child failing to start,
// named with its log.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// child is one piece of the cluster, a process of this same binary.
type child struct {
	name string
	args []string
	log  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when the current process has exited
	err  error         // its exit
}

func (c *child) start(self, dir string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil {
		select {
		case <-c.done:
		default:
			return fmt.Errorf("%s is already running (pid %d)", c.name, c.cmd.Process.Pid)
		}
	}
	logf, err := os.OpenFile(c.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "==== %s: kube-cluster %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(c.args, " "))
	cmd := exec.Command(self, c.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Stdin = nil
	// Own process group (so a stop reaches what the child started too), and
	// killed with us if we die.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	done := make(chan struct{})
	c.cmd, c.done, c.err = cmd, done, nil
	_ = os.WriteFile(filepath.Join(dir, "pids", c.name), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
	go func() {
		err := cmd.Wait()
		logf.Close()
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(done)
	}()
	return nil
}

func (c *child) running() (pid int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return 0, false
	}
	select {
	case <-c.done:
		return c.cmd.Process.Pid, false
	default:
		return c.cmd.Process.Pid, true
	}
}

func (c *child) exited() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		ch := make(chan struct{})
		return ch
	}
	return c.done
}

func (c *child) exitErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// stop signals the child's process group and waits for it; after grace it
// kills the group.
func (c *child) stop(sig syscall.Signal, grace time.Duration) {
	pid, ok := c.running()
	if !ok {
		// Its process may be gone while something it started is not.
		if pid > 0 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		return
	}
	_ = syscall.Kill(-pid, sig)
	select {
	case <-c.exited():
	case <-time.After(grace):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		select {
		case <-c.exited():
		case <-time.After(5 * time.Second):
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL) // leftovers of the group
}

// lastLine is the last line of a log that looks like an error, else the last
// line, for a one-line failure message.
func lastLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > 64<<10 {
		_, _ = f.Seek(st.Size()-64<<10, io.SeekStart)
	}
	var last, lastErr string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "====") {
			continue
		}
		last = l
		low := strings.ToLower(l)
		if strings.HasPrefix(l, "E") || strings.HasPrefix(l, "F") || strings.Contains(low, "error") || strings.Contains(low, "fail") {
			lastErr = l
		}
	}
	if lastErr != "" {
		last = lastErr
	}
	if len(last) > 300 {
		last = last[:300] + "…"
	}
	return last
}

type cluster struct {
	self, dir  string
	kubeconfig string
	server     string
	tlsConfig  *tls.Config
	children   map[string]*child
	order      []string
	ready      map[string]func(ctx context.Context) error
}

func (cl *cluster) failure(name string, what string) error {
	c := cl.children[name]
	msg := fmt.Sprintf("%s %s; its log: %s", name, what, c.log)
	if l := lastLine(c.log); l != "" {
		msg += " (last: " + l + ")"
	}
	return errors.New(msg)
}

// waitReady starts nothing: it waits for a started child to be ready, failing
// at once if it exits first, and after timeout if it never gets ready.
func (cl *cluster) waitReady(name string, timeout time.Duration) error {
	c := cl.children[name]
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	exited := c.exited()
	check := cl.ready[name]
	for {
		select {
		case <-exited:
			err := c.exitErr()
			what := "exited before it was ready"
			if err != nil {
				what = fmt.Sprintf("exited (%v) before it was ready", err)
			}
			return cl.failure(name, what)
		default:
		}
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		err := check(cctx)
		ccancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return cl.failure(name, fmt.Sprintf("not ready within %s (%v)", timeout, err))
		case <-exited:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (cl *cluster) get(ctx context.Context, path string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cl.server+path, nil)
	if err != nil {
		return 0, nil, err
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: cl.tlsConfig, DisableKeepAlives: true}}
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, body, nil
}

func (cl *cluster) stopAll() {
	// Nodes first (its containers), then the controllers, then the apiserver,
	// then etcd.
	stages := [][]string{{"nodes", "scheduler", "controller-manager"}, {"apiserver"}, {"etcd"}}
	for _, stage := range stages {
		var wg sync.WaitGroup
		for _, n := range stage {
			if c, ok := cl.children[n]; ok {
				wg.Add(1)
				go func() { defer wg.Done(); c.stop(syscall.SIGTERM, 3*time.Second) }()
			}
		}
		wg.Wait()
	}
}

func runUp(args []string) int {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	dirFlag := fs.String("dir", "", "folder for everything (default: a new temporary folder, removed at exit)")
	keep := fs.Bool("keep", false, "keep the folder at exit")
	goaway := fs.String("goaway-chance", os.Getenv("EFFECT_KUBE_GOAWAY_CHANCE"), "kube-apiserver --goaway-chance (env EFFECT_KUBE_GOAWAY_CHANCE)")
	audit := fs.Bool("audit", os.Getenv("EFFECT_KUBE_AUDIT") != "", "write an audit log (logs/audit.log, level Metadata for every request unless --audit-policy) (env EFFECT_KUBE_AUDIT=1)")
	auditPolicy := fs.String("audit-policy", os.Getenv("EFFECT_KUBE_AUDIT_POLICY"), "audit policy file (implies --audit) (env EFFECT_KUBE_AUDIT_POLICY)")
	var apiserverArgs, kcmArgs, schedulerArgs stringList
	fs.Var(&apiserverArgs, "apiserver-arg", "extra kube-apiserver flag, repeatable (env EFFECT_KUBE_APISERVER_ARGS, space separated)")
	fs.Var(&kcmArgs, "controller-manager-arg", "extra kube-controller-manager flag, repeatable")
	fs.Var(&schedulerArgs, "scheduler-arg", "extra kube-scheduler flag, repeatable")
	timeout := fs.Duration("timeout", 90*time.Second, "give up when the cluster is not ready within this")
	apiserverPort := fs.Int("port", 0, "kube-apiserver's port on 127.0.0.1 (default: a free one)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if env := strings.Fields(os.Getenv("EFFECT_KUBE_APISERVER_ARGS")); len(env) > 0 {
		apiserverArgs = append(env, apiserverArgs...)
	}
	start := time.Now()
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "effect-kube cluster: "+format+"\n", a...)
		return 1
	}

	self, err := os.Executable()
	if err != nil {
		return fail("cannot find its own binary: %v", err)
	}
	dir := *dirFlag
	removeDir := false
	if dir == "" {
		if dir, err = os.MkdirTemp("", "effect-kube-cluster-"); err != nil {
			return fail("cannot make a temporary folder: %v", err)
		}
		removeDir = !*keep
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return fail("%v", err)
	}
	for _, d := range []string{"pki", "logs", "pids", "etcd", "node"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return fail("cannot make %s: %v", filepath.Join(dir, d), err)
		}
	}
	started := false // once ready, the folder goes at exit; before, a failure keeps the logs
	defer func() {
		if removeDir && started {
			_ = os.RemoveAll(dir)
		} else if removeDir {
			_ = os.RemoveAll(filepath.Join(dir, "etcd"))
			_ = os.RemoveAll(filepath.Join(dir, "node"))
		}
	}()

	// Ports.
	ports := map[string]int{}
	for _, p := range []string{"etcd-client", "etcd-peer", "apiserver", "kubelet", "control"} {
		if ports[p], err = freePort(); err != nil {
			return fail("no free loopback port: %v", err)
		}
	}
	if *apiserverPort != 0 {
		ports["apiserver"] = *apiserverPort
	}

	// PKI and kubeconfigs.
	pki := filepath.Join(dir, "pki")
	authority, err := newCA()
	if err != nil {
		return fail("cannot make the CA: %v", err)
	}
	caPath := filepath.Join(pki, "ca.crt")
	caKeyPath := filepath.Join(pki, "ca.key")
	caKeyPEM, _ := keyPEM(authority.key)
	if err := os.WriteFile(caPath, authority.pem, 0o644); err != nil {
		return fail("%v", err)
	}
	if err := os.WriteFile(caKeyPath, caKeyPEM, 0o600); err != nil {
		return fail("%v", err)
	}
	type leaf struct {
		name, cn string
		orgs     []string
		hosts    []string
	}
	leaves := []leaf{
		{"apiserver", "kube-apiserver", nil, []string{"127.0.0.1", "::1", "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "10.96.0.1"}},
		{"apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"}, nil},
		{"admin", "effect-kube-admin", []string{"system:masters"}, nil},
		{"controller-manager", "system:kube-controller-manager", nil, nil},
		{"scheduler", "system:kube-scheduler", nil, nil},
		{"node", "system:node:" + nodeName, []string{"system:nodes"}, nil},
		{"kubelet", nodeName, nil, []string{"127.0.0.1", "localhost", nodeName}},
	}
	ids := map[string]issued{}
	paths := map[string][2]string{}
	for _, l := range leaves {
		id, err := authority.issue(l.cn, l.orgs, l.hosts)
		if err != nil {
			return fail("cannot issue the %s certificate: %v", l.name, err)
		}
		c, k, err := id.write(pki, l.name)
		if err != nil {
			return fail("%v", err)
		}
		ids[l.name], paths[l.name] = id, [2]string{c, k}
	}
	saKey, saPub, err := serviceAccountKeys(pki)
	if err != nil {
		return fail("cannot make the service-account key: %v", err)
	}
	server := fmt.Sprintf("https://127.0.0.1:%d", ports["apiserver"])
	kubeconfigs := map[string]string{}
	for _, u := range []string{"admin", "controller-manager", "scheduler", "node"} {
		p := filepath.Join(dir, u+".kubeconfig")
		if err := os.WriteFile(p, kubeconfig(server, authority.pem, u, ids[u]), 0o600); err != nil {
			return fail("%v", err)
		}
		kubeconfigs[u] = p
	}
	pool := x509.NewCertPool()
	pool.AddCert(authority.cert)
	adminPair, err := tls.X509KeyPair(ids["admin"].cert, ids["admin"].key)
	if err != nil {
		return fail("%v", err)
	}

	// The pieces.
	logs := filepath.Join(dir, "logs")
	apiserverFlags := []string{
		"apiserver",
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", ports["etcd-client"]),
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports["apiserver"]),
		"--advertise-address=127.0.0.1",
		"--tls-cert-file=" + paths["apiserver"][0],
		"--tls-private-key-file=" + paths["apiserver"][1],
		"--client-ca-file=" + caPath,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saPub,
		"--service-account-signing-key-file=" + saKey,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--enable-priority-and-fairness=true",
		"--service-cluster-ip-range=10.96.0.0/16",
		"--kubelet-certificate-authority=" + caPath,
		"--kubelet-client-certificate=" + paths["apiserver-kubelet-client"][0],
		"--kubelet-client-key=" + paths["apiserver-kubelet-client"][1],
		"--kubelet-preferred-address-types=InternalIP",
		"--allow-privileged=true",
		// The apiserver's own address is loopback, which an Endpoints object
		// may not hold: no endpoints for the default/kubernetes Service.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		"--v=1",
	}
	if *goaway != "" {
		apiserverFlags = append(apiserverFlags, "--goaway-chance="+*goaway)
	}
	if *audit || *auditPolicy != "" {
		policy := *auditPolicy
		if policy == "" {
			policy = filepath.Join(dir, "audit-policy.yaml")
			if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o644); err != nil {
				return fail("%v", err)
			}
		}
		apiserverFlags = append(apiserverFlags, "--audit-policy-file="+policy, "--audit-log-path="+filepath.Join(logs, "audit.log"), "--audit-log-mode=blocking")
	}
	apiserverFlags = append(apiserverFlags, apiserverArgs...)

	cl := &cluster{
		self: self, dir: dir, kubeconfig: kubeconfigs["admin"], server: server,
		tlsConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{adminPair}},
		children:  map[string]*child{},
		ready:     map[string]func(ctx context.Context) error{},
	}
	add := func(name string, args []string, ready func(ctx context.Context) error) {
		cl.children[name] = &child{name: name, args: args, log: filepath.Join(logs, name+".log")}
		cl.order = append(cl.order, name)
		cl.ready[name] = ready
	}
	add("etcd", []string{"etcd", "--data-dir=" + filepath.Join(dir, "etcd"),
		fmt.Sprintf("--listen-client=127.0.0.1:%d", ports["etcd-client"]),
		fmt.Sprintf("--listen-peer=127.0.0.1:%d", ports["etcd-peer"])},
		func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/health", ports["etcd-client"]), nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != 200 || !strings.Contains(string(body), `"true"`) {
				return fmt.Errorf("/health: %d %s", res.StatusCode, body)
			}
			return nil
		})
	add("apiserver", apiserverFlags, func(ctx context.Context) error {
		code, body, err := cl.get(ctx, "/readyz")
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("/readyz: %d %s", code, strings.TrimSpace(string(body)))
		}
		return nil
	})
	add("controller-manager", append([]string{"controller-manager",
		"--kubeconfig=" + kubeconfigs["controller-manager"],
		"--secure-port=0",
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + saKey,
		"--root-ca-file=" + caPath,
		"--cluster-signing-cert-file=" + caPath,
		"--cluster-signing-key-file=" + caKeyPath,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--controllers=*",
		"--v=1",
	}, kcmArgs...), func(ctx context.Context) error {
		// Ready when it has made the default ServiceAccount.
		code, body, err := cl.get(ctx, "/api/v1/namespaces/default/serviceaccounts/default")
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("serviceaccount default/default: %d", code)
		}
		_ = body
		return nil
	})
	add("scheduler", append([]string{"scheduler",
		"--kubeconfig=" + kubeconfigs["scheduler"],
		"--secure-port=0",
		"--leader-elect=false",
		"--v=1",
	}, schedulerArgs...), func(ctx context.Context) error { return nil })
	add("nodes", []string{"nodes",
		"--kubeconfig=" + kubeconfigs["node"],
		"--name=" + nodeName,
		fmt.Sprintf("--port=%d", ports["kubelet"]),
		"--tls-cert-file=" + paths["kubelet"][0],
		"--tls-private-key-file=" + paths["kubelet"][1],
		"--client-ca-file=" + caPath,
		"--dir=" + filepath.Join(dir, "node"),
	}, func(ctx context.Context) error {
		code, body, err := cl.get(ctx, "/api/v1/nodes/"+nodeName)
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("node %s: %d", nodeName, code)
		}
		var n struct {
			Status struct {
				Conditions []struct{ Type, Status string }
			}
		}
		if err := json.Unmarshal(body, &n); err != nil {
			return err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == "Ready" && c.Status == "True" {
				return nil
			}
		}
		return fmt.Errorf("node %s not Ready", nodeName)
	})

	// Stop on a signal, on our parent's death, or on stdin's end when it is a pipe.
	stopping := make(chan string, 4)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() { s := <-sigs; stopping <- s.String() }()
	ppid := os.Getppid()
	go func() {
		for range time.Tick(500 * time.Millisecond) {
			if os.Getppid() != ppid {
				stopping <- "parent exited"
				return
			}
		}
	}()
	if st, err := os.Stdin.Stat(); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			stopping <- "stdin closed"
		}()
	}
	defer cl.stopAll()

	// Start: etcd, the apiserver, then the rest together.
	deadline := time.Now().Add(*timeout)
	remaining := func() time.Duration {
		if d := time.Until(deadline); d > time.Second {
			return d
		}
		return time.Second
	}
	startErr := make(chan error, 1)
	var stageTimes []string // written before startErr is sent, read after
	go func() {
		for _, stage := range [][]string{{"etcd"}, {"apiserver"}, {"controller-manager", "scheduler", "nodes"}} {
			for _, n := range stage {
				if err := cl.children[n].start(self, dir); err != nil {
					startErr <- fmt.Errorf("%s did not start: %v; its log: %s", n, err, cl.children[n].log)
					return
				}
			}
			errs := make(chan error, len(stage))
			for _, n := range stage {
				go func() { errs <- cl.waitReady(n, remaining()) }()
			}
			for range stage {
				if err := <-errs; err != nil {
					startErr <- err
					return
				}
			}
			stageTimes = append(stageTimes, fmt.Sprintf("%s %.1fs", strings.Join(stage, "+"), time.Since(start).Seconds()))
		}
		startErr <- nil
	}()
	select {
	case err := <-startErr:
		if err != nil {
			fmt.Fprintf(os.Stderr, "effect-kube cluster: %v\n", err)
			return 1
		}
	case why := <-stopping:
		fmt.Fprintf(os.Stderr, "effect-kube cluster: stopped before it was ready (%s)\n", why)
		started = true
		return 1
	}
	started = true

	// The control endpoint: lets a test stop, kill and start one piece.
	control, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", ports["control"]))
	if err != nil {
		if control, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return fail("no loopback port for the control endpoint: %v", err)
		}
	}
	controlURL := "http://" + control.Addr().String()
	go func() { _ = http.Serve(control, cl.controlHandler()) }()

	kubectl := filepath.Join(filepath.Dir(self), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		kubectl = filepath.Join(dir, "kubectl")
		_ = os.Symlink(self, kubectl)
	}
	env := fmt.Sprintf("KUBECONFIG=%s\nKUBECTL=%s\nEFFECT_KUBE_CLUSTER_DIR=%s\nEFFECT_KUBE_CLUSTER_CONTROL=%s\n", cl.kubeconfig, kubectl, dir, controlURL)
	_ = os.WriteFile(filepath.Join(dir, "env"), []byte(env), 0o644)
	fmt.Fprintf(os.Stderr, "effect-kube cluster: ready in %.1fs (%s; %s ready; logs in %s)\n", time.Since(start).Seconds(), server, strings.Join(stageTimes, ", "), logs)
	fmt.Print(env)

	why := <-stopping
	fmt.Fprintf(os.Stderr, "effect-kube cluster: stopping (%s)\n", why)
	return 0
}

// controlHandler serves, on loopback only:
//
//	GET  /status                       {"etcd":{"pid":1,"running":true},...}
//	POST /stop?component=X[&signal=KILL] signal X's process group (TERM by default), wait for it to exit
//	POST /start?component=X             start X again with the same flags, wait until it is ready
//	POST /restart?component=X[&signal=KILL]
func (cl *cluster) controlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		type st struct {
			Pid     int  `json:"pid"`
			Running bool `json:"running"`
		}
		out := map[string]st{}
		names := append([]string(nil), cl.order...)
		sort.Strings(names)
		for _, n := range names {
			pid, ok := cl.children[n].running()
			out[n] = st{pid, ok}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
	pick := func(w http.ResponseWriter, r *http.Request) *child {
		c, ok := cl.children[r.URL.Query().Get("component")]
		if !ok {
			http.Error(w, "component must be one of "+strings.Join(cl.order, ", "), http.StatusBadRequest)
			return nil
		}
		return c
	}
	stop := func(c *child, r *http.Request) {
		sig := syscall.SIGTERM
		if strings.EqualFold(r.URL.Query().Get("signal"), "KILL") {
			sig = syscall.SIGKILL
		}
		c.stop(sig, 10*time.Second)
	}
	start := func(c *child) error {
		if err := c.start(cl.self, cl.dir); err != nil {
			return err
		}
		return cl.waitReady(c.name, 60*time.Second)
	}
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, r *http.Request) {
		if c := pick(w, r); c != nil {
			stop(c, r)
			fmt.Fprintln(w, "stopped")
		}
	})
	mux.HandleFunc("POST /start", func(w http.ResponseWriter, r *http.Request) {
		if c := pick(w, r); c != nil {
			if err := start(c); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			fmt.Fprintln(w, "ready")
		}
	})
	mux.HandleFunc("POST /restart", func(w http.ResponseWriter, r *http.Request) {
		if c := pick(w, r); c != nil {
			stop(c, r)
			if err := start(c); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			fmt.Fprintln(w, "ready")
		}
	})
	return mux
}
