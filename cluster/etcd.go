package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// runEtcd runs one etcd member in this process (go.etcd.io/etcd/server/v3/embed,
// the etcd that k8s.io/kubernetes v1.35 itself is built and tested against),
// plain HTTP on loopback, until SIGTERM/SIGINT.
func runEtcd(args []string) int {
	fs := flag.NewFlagSet("etcd", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "data folder (required)")
	client := fs.String("listen-client", "127.0.0.1:2379", "client address host:port")
	peer := fs.String("listen-peer", "127.0.0.1:2380", "peer address host:port")
	fsync := fs.Bool("fsync", false, "fsync writes (off: a test cluster's data is thrown away anyway)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "etcd: --data-dir is required")
		return 2
	}
	cu, err := url.Parse("http://" + *client)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: --listen-client: %v\n", err)
		return 2
	}
	pu, err := url.Parse("http://" + *peer)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: --listen-peer: %v\n", err)
		return 2
	}
	cfg := embed.NewConfig()
	cfg.Name = "effect-kube"
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = []url.URL{*cu}
	cfg.AdvertiseClientUrls = []url.URL{*cu}
	cfg.ListenPeerUrls = []url.URL{*pu}
	cfg.AdvertisePeerUrls = []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "warn"
	// Not set by NewConfig: without it every request is logged as slow.
	cfg.WarningUnaryRequestDuration = time.Second
	cfg.WarningApplyDuration = time.Second
	cfg.UnsafeNoFsync = !*fsync
	// Keep the history small: compact what is older than 5 minutes.
	cfg.AutoCompactionMode = embed.CompactorModePeriodic
	cfg.AutoCompactionRetention = "5m"
	cfg.QuotaBackendBytes = 2 << 30

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: start: %v\n", err)
		return 1
	}
	select {
	case <-e.Server.ReadyNotify():
		fmt.Fprintf(os.Stderr, "etcd: ready on %s\n", cu.String())
	case <-time.After(30 * time.Second):
		e.Server.Stop()
		fmt.Fprintln(os.Stderr, "etcd: not ready within 30s")
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case s := <-sig:
		fmt.Fprintf(os.Stderr, "etcd: %v, stopping\n", s)
		done := make(chan struct{})
		go func() { e.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		return 0
	case err := <-e.Err():
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		return 1
	}
}
