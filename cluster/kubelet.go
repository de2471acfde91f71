package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"k8s.io/apimachinery/pkg/types"
	remotecommandconsts "k8s.io/apimachinery/pkg/util/remotecommand"
	clientremotecommand "k8s.io/client-go/tools/remotecommand"
	"k8s.io/kubelet/pkg/cri/streaming/portforward"
	"k8s.io/kubelet/pkg/cri/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// The kubelet endpoints the apiserver proxies pods/log, pods/exec,
// pods/attach and pods/portforward to.
func (n *node) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	mux.HandleFunc("GET /containerLogs/{ns}/{pod}/{container}", n.serveLogs)
	for _, p := range []string{"/exec/{ns}/{pod}/{container}", "/exec/{ns}/{pod}/{uid}/{container}"} {
		mux.HandleFunc(p, n.serveExec)
	}
	for _, p := range []string{"/attach/{ns}/{pod}/{container}", "/attach/{ns}/{pod}/{uid}/{container}"} {
		mux.HandleFunc(p, n.serveAttach)
	}
	for _, p := range []string{"/portForward/{ns}/{pod}", "/portForward/{ns}/{pod}/{uid}"} {
		mux.HandleFunc(p, n.servePortForward)
	}
	return mux
}

func (n *node) podFor(w http.ResponseWriter, r *http.Request) *pod {
	p := n.lookup(r.PathValue("ns"), r.PathValue("pod"))
	if p == nil || (r.PathValue("uid") != "" && string(p.uid) != r.PathValue("uid")) {
		http.Error(w, fmt.Sprintf("pod %s/%s not found on node %s", r.PathValue("ns"), r.PathValue("pod"), n.name), http.StatusNotFound)
		return nil
	}
	return p
}

// logLine is one stored line: "TIMESTAMP STREAM CONTENT".
type logLine struct {
	ts      time.Time
	tsText  string
	stream  string
	content []byte
}

func parseLogLine(b []byte) (logLine, bool) {
	i := bytes.IndexByte(b, ' ')
	if i < 0 {
		return logLine{}, false
	}
	j := bytes.IndexByte(b[i+1:], ' ')
	if j < 0 {
		return logLine{}, false
	}
	ts, err := time.Parse(time.RFC3339Nano, string(b[:i]))
	if err != nil {
		return logLine{}, false
	}
	return logLine{ts: ts, tsText: string(b[:i]), stream: string(b[i+1 : i+1+j]), content: b[i+2+j:]}, true
}

// serveLogs is /containerLogs: follow, previous, tailLines, timestamps,
// sinceSeconds, sinceTime, limitBytes and stream (Stdout, Stderr, All).
func (n *node) serveLogs(w http.ResponseWriter, r *http.Request) {
	p := n.podFor(w, r)
	if p == nil {
		return
	}
	name := r.PathValue("container")
	q := r.URL.Query()
	p.mu.Lock()
	c := p.find(name)
	if c == nil {
		p.mu.Unlock()
		http.Error(w, fmt.Sprintf("container %q in pod %q is not valid", name, p.name), http.StatusNotFound)
		return
	}
	runs := append([]string(nil), c.runs...)
	p.mu.Unlock()
	previous := q.Get("previous") == "true"
	idx := len(runs) - 1
	if previous {
		idx--
	}
	if idx < 0 {
		if previous {
			http.Error(w, fmt.Sprintf("previous terminated container %q in pod %q not found", name, p.name), http.StatusBadRequest)
		} else {
			http.Error(w, fmt.Sprintf("container %q in pod %q is waiting to start: ContainerCreating", name, p.name), http.StatusBadRequest)
		}
		return
	}
	path := runs[idx]
	follow := q.Get("follow") == "true" && !previous
	timestamps := q.Get("timestamps") == "true"
	tail := -1
	if v := q.Get("tailLines"); v != "" {
		if t, err := strconv.Atoi(v); err == nil && t >= 0 {
			tail = t
		}
	}
	var since time.Time
	if v := q.Get("sinceSeconds"); v != "" {
		if s, err := strconv.Atoi(v); err == nil {
			since = time.Now().Add(-time.Duration(s) * time.Second)
		}
	}
	if v := q.Get("sinceTime"); v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			since = t
		}
	}
	limit := int64(-1)
	if v := q.Get("limitBytes"); v != "" {
		if l, err := strconv.ParseInt(v, 10, 64); err == nil && l > 0 {
			limit = l
		}
	}
	streamWanted := q.Get("stream") // "", All, Stdout, Stderr

	f, err := os.Open(path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	written := int64(0)
	emit := func(l logLine) bool {
		if !since.IsZero() && l.ts.Before(since) {
			return true
		}
		switch streamWanted {
		case "Stdout":
			if l.stream != "stdout" {
				return true
			}
		case "Stderr":
			if l.stream != "stderr" {
				return true
			}
		}
		var out []byte
		if timestamps {
			out = append([]byte(l.tsText+" "), l.content...)
		} else {
			out = append([]byte(nil), l.content...)
		}
		out = append(out, '\n')
		if limit >= 0 && written+int64(len(out)) > limit {
			out = out[:limit-written]
		}
		k, err := w.Write(out)
		written += int64(k)
		if err != nil || (limit >= 0 && written >= limit) {
			return false
		}
		return true
	}

	rd := bufio.NewReaderSize(f, 64<<10)
	var pending []byte
	readLines := func() []logLine {
		var out []logLine
		for {
			b, err := rd.ReadBytes('\n')
			pending = append(pending, b...)
			if err != nil {
				return out
			}
			if l, ok := parseLogLine(bytes.TrimSuffix(pending, []byte("\n"))); ok {
				l.content = append([]byte(nil), l.content...)
				out = append(out, l)
			}
			pending = pending[:0]
		}
	}
	first := readLines()
	if tail >= 0 && len(first) > tail {
		first = first[len(first)-tail:]
	}
	for _, l := range first {
		if !emit(l) {
			return
		}
	}
	if flusher != nil {
		flusher.Flush()
	}
	if !follow {
		return
	}
	// Follow until this run of the container has ended and its log is read,
	// the pod goes, or the client leaves.
	for {
		p.mu.Lock()
		ended := len(c.runs)-1 != idx || c.state == terminated
		p.mu.Unlock()
		for _, l := range readLines() {
			if !emit(l) {
				return
			}
		}
		if flusher != nil {
			flusher.Flush()
		}
		if ended {
			for _, l := range readLines() {
				emit(l)
			}
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-p.done:
			for _, l := range readLines() {
				emit(l)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

const streamIdle = 4 * time.Hour
const streamCreation = 30 * time.Second

func (n *node) serveExec(w http.ResponseWriter, r *http.Request) {
	p := n.podFor(w, r)
	if p == nil {
		return
	}
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cmd := r.URL.Query()["command"]
	remotecommand.ServeExec(w, r, &runtimeFor{n: n, p: p}, p.name, p.uid, r.PathValue("container"), cmd, opts, streamIdle, streamCreation, remotecommandconsts.SupportedStreamingProtocols)
}

func (n *node) serveAttach(w http.ResponseWriter, r *http.Request) {
	p := n.podFor(w, r)
	if p == nil {
		return
	}
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	remotecommand.ServeAttach(w, r, &runtimeFor{n: n, p: p}, p.name, p.uid, r.PathValue("container"), opts, streamIdle, streamCreation, remotecommandconsts.SupportedStreamingProtocols)
}

func (n *node) servePortForward(w http.ResponseWriter, r *http.Request) {
	p := n.podFor(w, r)
	if p == nil {
		return
	}
	opts, err := portforward.NewV4Options(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	portforward.ServePortForward(w, r, &runtimeFor{n: n, p: p}, p.name, p.uid, opts, streamIdle, streamCreation, portforward.SupportedProtocols)
}

// runtimeFor is the container runtime of one pod, for the streaming handlers.
type runtimeFor struct {
	n *node
	p *pod
}

func (rt *runtimeFor) runningContainer(name string) (*container, []string, error) {
	p := rt.p
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.find(name)
	if c == nil {
		return nil, nil, fmt.Errorf("container %q not found in pod %s", name, p.key())
	}
	if c.state != running {
		// what the container's last run ended with, so that a test that raced a restart says why
		last := c.term
		if last == nil {
			last = c.last
		}
		if last != nil {
			return nil, nil, fmt.Errorf("container %s is not running in pod %s (its run %d ended %s after %s: exit %d, %s %s; restarts %d, %s)",
				name, p.key(), len(c.runs), last.finished.UTC().Format("15:04:05.000"), last.finished.Sub(last.started).Round(time.Millisecond),
				last.code, last.reason, last.message, c.restarts, c.waitReason)
		}
		return nil, nil, fmt.Errorf("container %s is not running in pod %s (%s)", name, p.key(), c.waitReason)
	}
	return c, p.env[name], nil
}

// ExecInContainer runs cmd on the host in the pod's folder, with the
// container's environment; with a TTY, on a pseudo-terminal.
func (rt *runtimeFor) ExecInContainer(ctx context.Context, _ string, _ types.UID, container string, cmd []string, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan clientremotecommand.TerminalSize, timeout time.Duration) error {
	_, env, err := rt.runningContainer(container)
	if err != nil {
		return err
	}
	if len(cmd) == 0 {
		return errors.New("no command")
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	rt.p.mu.Lock()
	sb := rt.p.sandbox
	workingDir := ""
	if cs := rt.p.find(container); cs != nil {
		workingDir = cs.spec.WorkingDir
	}
	rt.p.mu.Unlock()
	var c *exec.Cmd
	if sb != nil {
		c = sb.command(cmd, workingDir)
	} else {
		// No sandbox: on the host, in the pod's folder (what kwok's local exec does).
		path, err := exec.LookPath(cmd[0])
		if err != nil {
			return fmt.Errorf("exec: %q: executable file not found in $PATH", cmd[0])
		}
		c = exec.Command(path, cmd[1:]...)
		c.Args[0] = cmd[0]
		c.Dir = rt.p.dir
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := os.MkdirAll(rt.p.dir, 0o755); err != nil {
			return err
		}
	}
	c.Env = env
	var waitErr error
	if tty {
		// The client sends the terminal's size right after the streams are up:
		// start the process at that size when it comes soon.
		var size *pty.Winsize
		select {
		case s, ok := <-resize:
			if ok {
				size = &pty.Winsize{Rows: s.Height, Cols: s.Width}
			}
		case <-time.After(200 * time.Millisecond):
		}
		f, err := pty.StartWithSize(c, size)
		if err != nil {
			return err
		}
		defer f.Close()
		go func() {
			for size := range resize {
				_ = pty.Setsize(f, &pty.Winsize{Rows: size.Height, Cols: size.Width})
			}
		}()
		if in != nil {
			go func() { _, _ = io.Copy(f, in) }()
		}
		copied := make(chan struct{})
		go func() {
			if out != nil {
				_, _ = io.Copy(out, f)
			} else {
				_, _ = io.Copy(io.Discard, f)
			}
			close(copied)
		}()
		waitErr = waitCtx(ctx, c)
		select {
		case <-copied:
		case <-time.After(time.Second):
		}
	} else {
		if out != nil {
			c.Stdout = out
		}
		if errw != nil {
			c.Stderr = errw
		}
		var stdin io.WriteCloser
		if in != nil {
			stdin, _ = c.StdinPipe()
		}
		if err := c.Start(); err != nil {
			return err
		}
		if stdin != nil {
			go func() { _, _ = io.Copy(stdin, in); stdin.Close() }()
		}
		waitErr = waitCtx(ctx, c)
	}
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		code := ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		return utilexec.CodeExitError{Err: waitErr, Code: code}
	}
	return waitErr
}

func waitCtx(ctx context.Context, c *exec.Cmd) error {
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		killTree(c.Process.Pid)
		return <-done
	}
}

// AttachContainer streams what the container writes from now on, and feeds
// its stdin when it was started with stdin: true.
func (rt *runtimeFor) AttachContainer(ctx context.Context, _ string, _ types.UID, container string, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan clientremotecommand.TerminalSize) error {
	c, _, err := rt.runningContainer(container)
	if err != nil {
		return err
	}
	p := rt.p
	p.mu.Lock()
	path := c.runs[len(c.runs)-1]
	stdin := c.stdin
	run := len(c.runs)
	p.mu.Unlock()
	if in != nil && stdin != nil {
		go func() { _, _ = io.Copy(stdin, in) }()
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, _ = f.Seek(0, io.SeekEnd)
	rd := bufio.NewReader(f)
	var pending []byte
	for {
		for {
			b, err := rd.ReadBytes('\n')
			pending = append(pending, b...)
			if err != nil {
				break
			}
			if l, ok := parseLogLine(bytes.TrimSuffix(pending, []byte("\n"))); ok {
				dst := out
				if l.stream == "stderr" && errw != nil && !tty {
					dst = errw
				}
				if dst != nil {
					if _, err := dst.Write(append(l.content, '\n')); err != nil {
						return nil
					}
				}
			}
			pending = pending[:0]
		}
		p.mu.Lock()
		ended := len(c.runs) != run || c.state != running
		p.mu.Unlock()
		if ended {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-p.done:
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// PortForward serves a forwarded connection itself: HTTP requests get a
// 200 answer naming the pod and port, anything else is echoed back.
func (rt *runtimeFor) PortForward(ctx context.Context, _ string, _ types.UID, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	rt.p.mu.Lock()
	sb := rt.p.sandbox
	rt.p.mu.Unlock()
	if sb != nil {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := sb.dial(dctx, port)
		cancel()
		if err == nil {
			// What listens on the pod's loopback at that port.
			defer conn.Close()
			down := make(chan struct{})
			go func() { _, _ = io.Copy(conn, stream); _ = conn.(*net.TCPConn).CloseWrite() }()
			go func() { _, _ = io.Copy(stream, conn); close(down) }()
			select {
			case <-down:
			case <-ctx.Done():
			}
			return nil
		}
	}
	// Nothing listens there (or no sandbox): the node answers itself.
	rd := bufio.NewReader(stream)
	head, _ := rd.Peek(4)
	method := strings.ToUpper(string(head))
	if strings.HasPrefix(method, "GET ") || strings.HasPrefix(method, "HEAD") || strings.HasPrefix(method, "POST") || strings.HasPrefix(method, "PUT ") || strings.HasPrefix(method, "DELE") || strings.HasPrefix(method, "OPTI") || strings.HasPrefix(method, "PATC") {
		for {
			req, err := http.ReadRequest(rd)
			if err != nil {
				return nil
			}
			_, _ = io.Copy(io.Discard, req.Body)
			req.Body.Close()
			body := fmt.Sprintf("effect-kube node: pod %s port %d: %s %s\n", rt.p.key(), port, req.Method, req.URL.RequestURI())
			res := &http.Response{
				StatusCode: 200, ProtoMajor: 1, ProtoMinor: 1, Request: req,
				Header:        http.Header{"Content-Type": {"text/plain; charset=utf-8"}},
				ContentLength: int64(len(body)), Body: io.NopCloser(strings.NewReader(body)),
				Close: req.Close,
			}
			if err := res.Write(stream); err != nil || req.Close {
				return nil
			}
		}
	}
	_, err := io.Copy(stream, rd)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	return nil
}

var _ = filepath.Join
