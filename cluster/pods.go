package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// What a container does on this node:
//
//   - When the pod has a sandbox (sandbox.go: its own mount, network, PID, UTS
//     and IPC namespaces, the host's /usr and /etc read-only, the rest the
//     pod's folder), the container's command (command + args) runs there for
//     real. Its stdout and stderr are the container's log; its exit code is
//     the container's.
//   - A container without command and args (the image's entrypoint, not
//     known here; args alone run as a command), one whose program the host
//     does not have (it exits 127: nginx, httpd,
//     python -m ... when absent), and every container of a pod without a
//     sandbox is a stand-in: it writes one line to its log, `effect-kube node:
//     container NAME (IMAGE) of pod NS/POD started; its image's program is not
//     run here`, and then runs until it is stopped when the pod's
//     restartPolicy is Always, or exits 0 one second after it started when it
//     is Never or OnFailure (a Job).
//
// Restarts follow restartPolicy (Always: any exit; OnFailure: a non-zero exit;
// Never: none), after a back-off of 1 s doubling to 30 s at most (a kubelet's
// is 10 s to 5 min), shown as Waiting/CrashLoopBackOff. A running container is
// Ready at once (probes are not run). Init containers run first, in order;
// restartable ones (sidecars) keep running beside the main containers.

type containerState int

const (
	waiting containerState = iota
	running
	terminated
)

type termination struct {
	code              int32
	reason, message   string
	started, finished time.Time
	containerID       string
}

type container struct {
	spec    corev1.Container
	init    bool // an init container
	sidecar bool // an init container with restartPolicy Always

	// guarded by pod.mu
	state       containerState
	waitReason  string
	waitMessage string
	startedAt   time.Time
	term        *termination // when terminated
	last        *termination // the run before
	restarts    int
	id          string
	proc        *os.Process
	stdin       io.WriteCloser
	runs        []string // log file of each run
	stopRun     chan struct{}
}

type pod struct {
	n         *node
	uid       types.UID
	namespace string
	name      string
	dir       string
	ip        string
	created   time.Time

	mu         sync.Mutex
	spec       corev1.PodSpec
	meta       metav1.ObjectMeta
	hostIP     string
	phase      corev1.PodPhase
	startTime  metav1.Time
	initDone   bool
	containers []*container // init containers first
	env        map[string][]string
	done       chan struct{} // closed when the pod is being torn down
	doneOnce   sync.Once
	dirty      chan struct{}
	deleting   bool
	sandbox    *sandbox
	lastConds  map[corev1.PodConditionType]corev1.PodCondition
}

func newPod(n *node, obj *corev1.Pod) *pod {
	p := &pod{
		n: n, uid: obj.UID, namespace: obj.Namespace, name: obj.Name,
		dir:     filepath.Join(n.dir, "pods", string(obj.UID)),
		created: time.Now(),
		spec:    *obj.Spec.DeepCopy(), meta: *obj.ObjectMeta.DeepCopy(),
		hostIP: "127.0.0.1", phase: corev1.PodPending,
		done: make(chan struct{}), dirty: make(chan struct{}, 1),
		env: map[string][]string{},
	}
	if obj.Spec.HostNetwork {
		p.ip = "127.0.0.1"
	} else {
		p.ip = n.allocIPLocked() // observe holds n.mu
	}
	for _, c := range obj.Spec.InitContainers {
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		p.containers = append(p.containers, &container{spec: c, init: true, sidecar: sidecar, waitReason: "PodInitializing"})
	}
	for _, c := range obj.Spec.Containers {
		reason := "ContainerCreating"
		if len(obj.Spec.InitContainers) > 0 {
			reason = "PodInitializing"
		}
		p.containers = append(p.containers, &container{spec: c, waitReason: reason})
	}
	return p
}

func (p *pod) key() string { return p.namespace + "/" + p.name }

func (p *pod) find(name string) *container {
	for _, c := range p.containers {
		if c.spec.Name == name {
			return c
		}
	}
	return nil
}

func (p *pod) changed() {
	select {
	case p.dirty <- struct{}{}:
	default:
	}
}

// run is the pod's life on this node.
func (p *pod) run() {
	if err := os.MkdirAll(filepath.Join(p.dir, "logs"), 0o755); err != nil {
		p.n.logf("pod %s: %v", p.key(), err)
	}
	go p.statusLoop()
	p.mu.Lock()
	p.startTime = metav1.Now()
	p.mu.Unlock()
	if p.n.noSandbox == "" {
		sb, err := startSandbox(p.n.self, p.dir, p.name)
		if err != nil {
			p.n.logf("pod %s: no sandbox, its containers stand in: %v", p.key(), err)
		} else {
			p.mu.Lock()
			p.sandbox = sb
			p.mu.Unlock()
			select {
			case <-p.done:
				sb.stop()
				return
			default:
			}
		}
	}
	for _, c := range p.containers {
		env := p.containerEnv(c.spec)
		p.mu.Lock()
		p.env[c.spec.Name] = env
		p.mu.Unlock()
	}
	p.changed()

	// Init containers, in order.
	for _, c := range p.containers {
		if !c.init {
			continue
		}
		if c.sidecar {
			started := make(chan struct{})
			go p.supervise(c, started)
			select {
			case <-started:
			case <-p.done:
				return
			}
			continue
		}
		ok := make(chan bool, 1)
		go func() { ok <- p.superviseInit(c) }()
		select {
		case good := <-ok:
			if !good {
				return
			}
		case <-p.done:
			return
		}
	}
	p.mu.Lock()
	p.initDone = true
	if p.phase == corev1.PodPending {
		p.phase = corev1.PodRunning
	}
	p.mu.Unlock()
	p.changed()
	for _, c := range p.containers {
		if !c.init {
			go p.supervise(c, nil)
		}
	}
}

// policy is the restart policy for a container of this pod.
func (p *pod) policy(c *container) corev1.RestartPolicy {
	if c.sidecar {
		return corev1.RestartPolicyAlways
	}
	if c.init {
		if p.spec.RestartPolicy == corev1.RestartPolicyNever {
			return corev1.RestartPolicyNever
		}
		return corev1.RestartPolicyOnFailure
	}
	if p.spec.RestartPolicy == "" {
		return corev1.RestartPolicyAlways
	}
	return p.spec.RestartPolicy
}

func backoff(restarts int) time.Duration {
	d := time.Second << min(restarts, 5)
	return min(d, 30*time.Second)
}

// superviseInit runs an init container until it succeeds; false when the pod
// failed (restartPolicy Never) or is going away.
func (p *pod) superviseInit(c *container) bool {
	for {
		code := p.runOnce(c)
		if code == 0 {
			return true
		}
		if p.policy(c) == corev1.RestartPolicyNever {
			p.mu.Lock()
			p.phase = corev1.PodFailed
			sb := p.sandbox
			p.mu.Unlock()
			sb.stop()
			p.changed()
			return false
		}
		if !p.waitBackoff(c) {
			return false
		}
	}
}

// supervise runs a container, restarting it by the policy, until the pod is
// done; started (if not nil) is closed once it has started the first time.
func (p *pod) supervise(c *container, started chan struct{}) {
	for {
		code := p.runOnce(c, started)
		started = nil
		select {
		case <-p.done:
			return
		default:
		}
		pol := p.policy(c)
		if pol == corev1.RestartPolicyNever || (pol == corev1.RestartPolicyOnFailure && code == 0) {
			p.settle()
			return
		}
		if !p.waitBackoff(c) {
			return
		}
	}
}

func (p *pod) waitBackoff(c *container) bool {
	p.mu.Lock()
	d := backoff(c.restarts)
	c.last = c.term
	c.term = nil
	c.state = waiting
	c.waitReason = "CrashLoopBackOff"
	c.waitMessage = fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", d, c.spec.Name, p.name, p.namespace, p.uid)
	c.restarts++
	p.mu.Unlock()
	p.changed()
	select {
	case <-time.After(d):
		return true
	case <-p.done:
		return false
	}
}

// settle sets the pod's phase once its main containers have all stopped for
// good (restartPolicy Never or OnFailure).
func (p *pod) settle() {
	p.mu.Lock()
	defer p.changed()
	defer p.mu.Unlock()
	if p.phase == corev1.PodSucceeded || p.phase == corev1.PodFailed {
		return
	}
	failed := false
	for _, c := range p.containers {
		if c.init {
			continue
		}
		if c.state != terminated {
			return
		}
		if c.term.code != 0 {
			if p.policy(c) == corev1.RestartPolicyOnFailure {
				return
			}
			failed = true
		}
	}
	if failed {
		p.phase = corev1.PodFailed
	} else {
		p.phase = corev1.PodSucceeded
	}
	// A finished pod's sandbox goes (its logs stay readable).
	defer p.sandbox.stop()
	// Sidecars stop with the pod.
	for _, c := range p.containers {
		if c.sidecar && c.stopRun != nil {
			p.stopContainer(c)
		}
	}
}

func (p *pod) program(c corev1.Container) []string {
	// Without a command, args run as one, as they do on an image with no
	// entrypoint (busybox: `kubectl run --image=busybox -- echo hi`); on an
	// image with one (nginx -g ...) that fails with 127, and the container
	// stands in. With neither, the image's entrypoint is not known here.
	return append(append([]string(nil), c.Command...), c.Args...)
}

// runOnce runs the container once and returns its exit code.
func (p *pod) runOnce(c *container, started ...chan struct{}) int32 {
	p.mu.Lock()
	run := len(c.runs)
	logPath := filepath.Join(p.dir, "logs", fmt.Sprintf("%s.%d.log", c.spec.Name, run))
	c.runs = append(c.runs, logPath)
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%s/%d/%d", p.uid, c.spec.Name, run, time.Now().UnixNano())))
	c.id = "effect-kube://" + hex.EncodeToString(sum[:])
	stopRun := make(chan struct{})
	c.stopRun = stopRun
	env := p.env[c.spec.Name]
	p.mu.Unlock()

	logFile, err := os.Create(logPath)
	if err != nil {
		p.n.logf("pod %s: %v", p.key(), err)
	}
	var logMu sync.Mutex
	stdout := &lineWriter{f: logFile, stream: "stdout", mu: &logMu}
	stderr := &lineWriter{f: logFile, stream: "stderr", mu: &logMu}

	argv := p.program(c.spec)
	p.mu.Lock()
	sb := p.sandbox
	p.mu.Unlock()
	var code int32
	var reason, message string
	begin := time.Now()
	markRunning := func(proc *os.Process, stdin io.WriteCloser) {
		p.mu.Lock()
		c.state, c.startedAt, c.proc, c.stdin = running, begin, proc, stdin
		c.waitReason, c.waitMessage = "", ""
		p.mu.Unlock()
		p.changed()
		for i, s := range started {
			if s != nil {
				close(s)
				started[i] = nil
			}
		}
	}
	standIn := func() {
		fmt.Fprintf(stdout, "effect-kube node: container %s (%s) of pod %s started; its image's program is not run here\n", c.spec.Name, c.spec.Image, p.key())
		stdout.flush()
		markRunning(nil, nil)
		var after <-chan time.Time
		if p.policy(c) != corev1.RestartPolicyAlways {
			after = time.After(time.Second)
		}
		select {
		case <-after:
			code, reason, message = 0, "Completed", ""
		case <-stopRun:
			code, reason = 137, "Error"
		case <-p.done:
			code, reason = 137, "Error"
		}
	}
	if len(argv) == 0 || sb == nil {
		standIn()
	} else {
		cmd := sb.command(argv, c.spec.WorkingDir)
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = stdout, stderr
		var stdin io.WriteCloser
		if c.spec.Stdin {
			stdin, _ = cmd.StdinPipe()
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(stderr, "effect-kube node: %v\n", err)
			stderr.flush()
			code, reason, message = 128, "StartError", err.Error()
		} else {
			markRunning(cmd.Process, stdin)
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			var werr error
			select {
			case werr = <-waited:
			case <-stopRun:
				killTree(cmd.Process.Pid)
				werr = <-waited
			case <-p.done:
				killTree(cmd.Process.Pid)
				werr = <-waited
			}
			code, reason = 0, "Completed"
			var ee *exec.ExitError
			if errors.As(werr, &ee) {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					code = 128 + int32(ws.Signal())
				} else {
					code = int32(ee.ExitCode())
				}
				reason = "Error"
			} else if werr != nil {
				code, reason, message = 128, "Error", werr.Error()
			}
			select {
			case <-p.done:
			case <-stopRun:
			default:
				if code == 127 {
					// A program the node does not have: stand in for it.
					stderr.flush()
					standIn()
				}
			}
		}
	}
	stdout.flush()
	stderr.flush()
	if logFile != nil {
		logFile.Close()
	}
	p.mu.Lock()
	c.state = terminated
	c.proc, c.stdin = nil, nil
	c.term = &termination{code: code, reason: reason, message: message, started: begin, finished: time.Now(), containerID: c.id}
	p.mu.Unlock()
	p.changed()
	return code
}

func (p *pod) stopContainer(c *container) {
	if c.stopRun != nil {
		select {
		case <-c.stopRun:
		default:
			close(c.stopRun)
		}
	}
}

// kill stops every container of the pod, now.
func (p *pod) kill() {
	p.doneOnce.Do(func() { close(p.done) })
	p.mu.Lock()
	var pids []int
	for _, c := range p.containers {
		if c.proc != nil {
			pids = append(pids, c.proc.Pid)
		}
	}
	p.mu.Unlock()
	for _, pid := range pids {
		killTree(pid)
	}
	p.mu.Lock()
	sb := p.sandbox
	p.mu.Unlock()
	sb.stop()
}

// terminate is the pod being deleted: stop its containers and remove it with
// grace 0 (as a kubelet does once the containers are gone).
func (p *pod) terminate() {
	p.mu.Lock()
	if p.deleting {
		p.mu.Unlock()
		return
	}
	p.deleting = true
	p.mu.Unlock()
	p.kill()
	go func() {
		zero := int64(0)
		uid := p.uid
		for i := 0; i < 30; i++ {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := p.n.client.CoreV1().Pods(p.namespace).Delete(ctx, p.name, metav1.DeleteOptions{
				GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid},
			})
			cancel()
			if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				return
			}
			p.n.logf("delete pod %s: %v (retrying)", p.key(), err)
			time.Sleep(time.Second)
		}
	}()
}

// statusLoop posts the pod's status whenever it changed, until the pod goes.
func (p *pod) statusLoop() {
	for {
		select {
		case <-p.dirty:
		case <-p.done:
			return
		}
		for attempt := 0; ; attempt++ {
			select {
			case <-p.done:
				return
			default:
			}
			err := p.postStatus()
			if err == nil || apierrors.IsNotFound(err) {
				break
			}
			p.n.logf("pod %s status: %v (retrying)", p.key(), err)
			time.Sleep(min(time.Duration(attempt+1)*200*time.Millisecond, 2*time.Second))
		}
	}
}

func (p *pod) postStatus() error {
	p.mu.Lock()
	st := p.statusLocked()
	p.mu.Unlock()
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": p.uid},
		"status":   st,
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = p.n.client.CoreV1().Pods(p.namespace).Patch(ctx, p.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

func cstate(c *container) (corev1.ContainerState, bool, *bool) {
	f, t := false, true
	switch c.state {
	case running:
		return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(c.startedAt)}}, true, &t
	case terminated:
		return corev1.ContainerState{Terminated: c.term.api()}, false, &f
	default:
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: c.waitReason, Message: c.waitMessage}}, false, &f
	}
}

func (t *termination) api() *corev1.ContainerStateTerminated {
	if t == nil {
		return nil
	}
	return &corev1.ContainerStateTerminated{
		ExitCode: t.code, Reason: t.reason, Message: t.message,
		StartedAt: metav1.NewTime(t.started), FinishedAt: metav1.NewTime(t.finished), ContainerID: t.containerID,
	}
}

// statusLocked is the PodStatus a kubelet would post now.
func (p *pod) statusLocked() corev1.PodStatus {
	now := metav1.Now()
	st := corev1.PodStatus{
		Phase:     p.phase,
		HostIP:    p.hostIP,
		HostIPs:   []corev1.HostIP{{IP: p.hostIP}},
		PodIP:     p.ip,
		PodIPs:    []corev1.PodIP{{IP: p.ip}},
		StartTime: &p.startTime,
	}
	allReady := true
	anyMain := false
	initOK := p.initDone
	for _, c := range p.containers {
		state, ready, started := cstate(c)
		cs := corev1.ContainerStatus{
			Name: c.spec.Name, State: state, Ready: ready, RestartCount: int32(c.restarts),
			Image: c.spec.Image, ImageID: "effect-kube://" + c.spec.Image, Started: started,
		}
		if c.state != waiting || c.id != "" {
			cs.ContainerID = c.id
		}
		if c.last != nil {
			cs.LastTerminationState = corev1.ContainerState{Terminated: c.last.api()}
		}
		if c.init {
			if !c.sidecar {
				cs.Ready = c.state == terminated && c.term != nil && c.term.code == 0
			}
			st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
			if c.sidecar && !ready {
				allReady = false
			}
			continue
		}
		anyMain = true
		if !ready {
			allReady = false
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	terminal := p.phase == corev1.PodSucceeded || p.phase == corev1.PodFailed
	ready := anyMain && allReady && initOK && !terminal
	cond := func(t corev1.PodConditionType, ok bool, reason string) corev1.PodCondition {
		s := corev1.ConditionFalse
		if ok {
			s = corev1.ConditionTrue
			reason = ""
		}
		return corev1.PodCondition{Type: t, Status: s, Reason: reason, LastTransitionTime: now}
	}
	readyReason := "ContainersNotReady"
	if terminal {
		readyReason = "PodCompleted"
	}
	initReason := "ContainersNotInitialized"
	if terminal {
		initReason = "PodCompleted"
	}
	st.Conditions = []corev1.PodCondition{
		cond(corev1.PodReadyToStartContainers, !terminal, ""),
		cond(corev1.PodInitialized, initOK || terminal && p.initDone, initReason),
		cond(corev1.PodReady, ready, readyReason),
		cond(corev1.ContainersReady, ready, readyReason),
	}
	if terminal && p.phase == corev1.PodSucceeded {
		st.Conditions[1] = cond(corev1.PodInitialized, true, "")
	}
	// Keep a condition's transition time when its status did not change.
	for i, c := range st.Conditions {
		if prev, ok := p.lastConds[c.Type]; ok && prev.Status == c.Status {
			st.Conditions[i].LastTransitionTime = prev.LastTransitionTime
		}
	}
	if p.lastConds == nil {
		p.lastConds = map[corev1.PodConditionType]corev1.PodCondition{}
	}
	for _, c := range st.Conditions {
		p.lastConds[c.Type] = c
	}
	return st
}

// containerEnv is the environment of a container's processes: the host's
// PATH, HOSTNAME and HOME, and the container's env (values, field references,
// and ConfigMap/Secret keys the node can read).
func (p *pod) containerEnv(c corev1.Container) []string {
	env := []string{
		"PATH=" + sandboxPath,
		"HOME=/root",
		"HOSTNAME=" + p.name,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	vals := map[string]string{}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef != nil {
			if cm, err := p.n.client.CoreV1().ConfigMaps(p.namespace).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{}); err == nil {
				for k, v := range cm.Data {
					env = append(env, from.Prefix+k+"="+v)
				}
			}
		}
		if from.SecretRef != nil {
			if s, err := p.n.client.CoreV1().Secrets(p.namespace).Get(ctx, from.SecretRef.Name, metav1.GetOptions{}); err == nil {
				for k, v := range s.Data {
					env = append(env, from.Prefix+k+"="+string(v))
				}
			}
		}
	}
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil {
			switch {
			case e.ValueFrom.FieldRef != nil:
				switch e.ValueFrom.FieldRef.FieldPath {
				case "metadata.name":
					v = p.name
				case "metadata.namespace":
					v = p.namespace
				case "metadata.uid":
					v = string(p.uid)
				case "spec.nodeName":
					v = p.n.name
				case "spec.serviceAccountName":
					v = p.spec.ServiceAccountName
				case "status.podIP":
					v = p.ip
				case "status.hostIP":
					v = p.hostIP
				}
			case e.ValueFrom.ConfigMapKeyRef != nil:
				if cm, err := p.n.client.CoreV1().ConfigMaps(p.namespace).Get(ctx, e.ValueFrom.ConfigMapKeyRef.Name, metav1.GetOptions{}); err == nil {
					v = cm.Data[e.ValueFrom.ConfigMapKeyRef.Key]
				}
			case e.ValueFrom.SecretKeyRef != nil:
				if s, err := p.n.client.CoreV1().Secrets(p.namespace).Get(ctx, e.ValueFrom.SecretKeyRef.Name, metav1.GetOptions{}); err == nil {
					v = string(s.Data[e.ValueFrom.SecretKeyRef.Key])
				}
			}
		} else {
			v = expand(v, vals)
		}
		vals[e.Name] = v
		env = append(env, e.Name+"="+v)
	}
	return env
}

// expand is $(VAR) expansion over the variables defined before.
func expand(s string, vals map[string]string) string {
	if !strings.Contains(s, "$(") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) && s[i+1] == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		if s[i] == '$' && i+1 < len(s) && s[i+1] == '(' {
			if j := strings.IndexByte(s[i:], ')'); j > 0 {
				name := s[i+2 : i+j]
				if v, ok := vals[name]; ok {
					b.WriteString(v)
					i += j
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// lineWriter writes a container's output to its log file, one line at a time,
// each as "TIMESTAMP STREAM CONTENT" (the CRI log format, less its tag).
type lineWriter struct {
	f      *os.File
	stream string
	mu     *sync.Mutex
	buf    bytes.Buffer
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.buf.Write(b)
	for {
		i := bytes.IndexByte(w.buf.Bytes(), '\n')
		if i < 0 {
			break
		}
		line := w.buf.Next(i + 1)
		w.emit(line[:len(line)-1])
	}
	if w.buf.Len() > 16<<10 {
		w.flush()
	}
	return len(b), nil
}

func (w *lineWriter) flush() {
	if w.buf.Len() > 0 {
		w.emit(w.buf.Bytes())
		w.buf.Reset()
	}
}

func (w *lineWriter) emit(line []byte) {
	if w.f == nil || (w.stream == "stderr" && bytes.HasPrefix(line, []byte("nsenter: failed to execute "))) {
		// The program is not on the host: the container stands in (exit 127),
		// and its log says so in its own words.
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	fmt.Fprintf(w.f, "%s %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), w.stream, line)
}

// killTree SIGKILLs a process and every process below it.
func killTree(pid int) {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		if k := strings.LastIndexByte(s, ')'); k > 0 {
			f := strings.Fields(s[k+1:])
			if len(f) > 1 {
				if pp, err := strconv.Atoi(f[1]); err == nil {
					children[pp] = append(children[pp], id)
				}
			}
		}
	}
	var walk func(int)
	walk = func(p int) {
		_ = syscall.Kill(p, syscall.SIGSTOP)
		for _, c := range children[p] {
			walk(c)
		}
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	walk(pid)
}

var _ = bufio.NewReader
