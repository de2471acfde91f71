package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A pod's sandbox: one process (`kube-cluster pod-sandbox`) in new mount, network,
// PID, UTS and IPC namespaces, chrooted into the pod's own root folder, where
// the host's /usr and /etc are bound read-only (and /bin, /lib, /sbin as the
// host has them), /proc is the sandbox's own, /dev holds null, zero, full,
// random, urandom, tty and the host's pts, and everything else (/tmp, /www, /root)
// is the pod's folder on disk. Its network has loopback only. Containers and
// execs enter it with nsenter(1) (util-linux): so a container's `mkdir /www`
// or `httpd -p 8080` stays in the pod, and a port-forward reaches what listens
// on the pod's loopback.

const sandboxPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

type sandbox struct {
	pid    int
	rootfs string
	cmd    *exec.Cmd
}

// sandboxSupport says why pods cannot have sandboxes here ("" when they can).
func sandboxSupport() string {
	if _, err := exec.LookPath("nsenter"); err != nil {
		return "no nsenter on PATH (util-linux)"
	}
	if os.Geteuid() != 0 {
		return "not root"
	}
	return ""
}

// startSandbox makes the pod's root folder and starts its sandbox process.
func startSandbox(self, podDir, hostname string) (*sandbox, error) {
	rootfs := filepath.Join(podDir, "rootfs")
	for _, d := range []string{"proc", "dev", "dev/pts", "dev/shm", "tmp", "root", "etc", "usr", "run", "var/tmp"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			return nil, err
		}
	}
	_ = os.Chmod(filepath.Join(rootfs, "tmp"), 0o1777)
	for _, d := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		f, err := os.OpenFile(filepath.Join(rootfs, "dev", d), os.O_CREATE|os.O_WRONLY, 0o666)
		if err != nil {
			return nil, err
		}
		f.Close()
	}
	// /bin, /lib, /lib64, /sbin, … as the host has them: a link (merged /usr)
	// is copied, a folder is bound.
	entries, _ := os.ReadDir("/")
	for _, e := range entries {
		name := e.Name()
		if !(name == "bin" || name == "sbin" || strings.HasPrefix(name, "lib")) {
			continue
		}
		if target, err := os.Readlink("/" + name); err == nil {
			_ = os.Remove(filepath.Join(rootfs, name))
			if err := os.Symlink(target, filepath.Join(rootfs, name)); err != nil {
				return nil, err
			}
		} else if e.IsDir() {
			if err := os.MkdirAll(filepath.Join(rootfs, name), 0o755); err != nil {
				return nil, err
			}
		}
	}
	cmd := exec.Command(self, "pod-sandbox", rootfs, hostname)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWNET | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC,
		Pdeathsig:  syscall.SIGKILL,
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err == nil && strings.TrimSpace(line) == "ready" {
			ready <- nil
			return
		}
		ready <- fmt.Errorf("sandbox did not start: %s", strings.TrimSpace(line+" "+stderr.String()))
	}()
	select {
	case err := <-ready:
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, err
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, errors.New("sandbox not ready within 10s")
	}
	go func() { _ = cmd.Wait() }()
	return &sandbox{pid: cmd.Process.Pid, rootfs: rootfs, cmd: cmd}, nil
}

// stop kills the sandbox's first process, and so every process in it.
func (s *sandbox) stop() {
	if s != nil {
		_ = syscall.Kill(s.pid, syscall.SIGKILL)
	}
}

// command is argv run inside the sandbox, in dir (a path in the sandbox).
func (s *sandbox) command(argv []string, dir string) *exec.Cmd {
	if dir == "" {
		dir = "/"
	}
	_ = os.MkdirAll(filepath.Join(s.rootfs, dir), 0o755)
	args := append([]string{"-t", fmt.Sprint(s.pid), "-m", "-n", "-u", "-i", "-p", "-r", "-W", dir, "--"}, argv...)
	nsenter, _ := exec.LookPath("nsenter")
	cmd := exec.Command(nsenter, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// dial connects to 127.0.0.1:port in the sandbox's network.
func (s *sandbox) dial(ctx context.Context, port int32) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// Not unlocked on purpose when the thread's namespace could not be
		// restored: then the thread ends with this goroutine.
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			done <- result{nil, err}
			runtime.UnlockOSThread()
			return
		}
		defer self.Close()
		target, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", s.pid))
		if err != nil {
			done <- result{nil, err}
			runtime.UnlockOSThread()
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- result{nil, err}
			runtime.UnlockOSThread()
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp4", fmt.Sprintf("127.0.0.1:%d", port))
		done <- result{c, err}
		if unix.Setns(int(self.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
	}()
	r := <-done
	return r.c, r.err
}

// runPodSandbox is the sandbox's first process (PID 1 of its namespace): it
// builds the root, enters it, says "ready" and reaps orphans until killed.
func runPodSandbox(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kube-cluster pod-sandbox ROOTFS HOSTNAME")
		return 2
	}
	rootfs, hostname := args[0], args[1]
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stdout, "failed: %s: %v\n", what, err)
		return 1
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fail("make / private", err)
	}
	bind := func(src, dst string, ro bool, rec bool) error {
		flags := uintptr(unix.MS_BIND)
		if rec {
			flags |= unix.MS_REC
		}
		if err := unix.Mount(src, dst, "", flags, ""); err != nil {
			return err
		}
		if ro {
			return unix.Mount("", dst, "", flags|unix.MS_REMOUNT|unix.MS_RDONLY, "")
		}
		return nil
	}
	mounts := []struct{ src, dst string }{{"/usr", "usr"}, {"/etc", "etc"}}
	entries, _ := os.ReadDir("/")
	for _, e := range entries {
		name := e.Name()
		if (name == "bin" || name == "sbin" || strings.HasPrefix(name, "lib")) && e.IsDir() && e.Type()&os.ModeSymlink == 0 {
			mounts = append(mounts, struct{ src, dst string }{"/" + name, name})
		}
	}
	for _, m := range mounts {
		if err := bind(m.src, filepath.Join(rootfs, m.dst), true, true); err != nil {
			return fail("bind "+m.src, err)
		}
	}
	for _, d := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		if err := bind("/dev/"+d, filepath.Join(rootfs, "dev", d), false, false); err != nil {
			return fail("bind /dev/"+d, err)
		}
	}
	if err := bind("/dev/pts", filepath.Join(rootfs, "dev/pts"), false, false); err != nil {
		return fail("bind /dev/pts", err)
	}
	_ = os.Symlink("pts/ptmx", filepath.Join(rootfs, "dev/ptmx"))
	_ = os.Symlink("/proc/self/fd", filepath.Join(rootfs, "dev/fd"))
	_ = os.Symlink("/proc/self/fd/0", filepath.Join(rootfs, "dev/stdin"))
	_ = os.Symlink("/proc/self/fd/1", filepath.Join(rootfs, "dev/stdout"))
	_ = os.Symlink("/proc/self/fd/2", filepath.Join(rootfs, "dev/stderr"))
	if err := unix.Mount("tmpfs", filepath.Join(rootfs, "dev/shm"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=64m"); err != nil {
		return fail("mount /dev/shm", err)
	}
	if err := unix.Mount("proc", filepath.Join(rootfs, "proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fail("mount /proc", err)
	}
	if err := unix.Chroot(rootfs); err != nil {
		return fail("chroot", err)
	}
	if err := os.Chdir("/"); err != nil {
		return fail("chdir", err)
	}
	if len(hostname) > 63 {
		hostname = hostname[:63]
	}
	if err := unix.Sethostname([]byte(hostname)); err != nil {
		return fail("hostname", err)
	}
	if err := loopbackUp(); err != nil {
		return fail("loopback up", err)
	}
	fmt.Fprintln(os.Stdout, "ready")
	os.Stdout.Close()
	// From here on the sandbox only has to exist: become a small "pause"
	// (this binary's package initialisation holds some 16 MB a process). It
	// does not reap orphans; they are few, and go with the sandbox.
	if sleep, err := exec.LookPath("sleep"); err == nil {
		_ = unix.Exec(sleep, []string{"pause", "infinity"}, []string{"PATH=" + sandboxPath})
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	reap := make(chan os.Signal, 16)
	signal.Notify(reap, syscall.SIGCHLD)
	for {
		select {
		case <-sigs:
			return 0
		case <-reap:
			for {
				var ws unix.WaitStatus
				pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
