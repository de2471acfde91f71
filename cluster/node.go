package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// runNodes is the kubelet stand-in: one Node, whose pods it "runs" (see
// pods.go for the rules) and whose kubelet endpoints (logs, exec, attach,
// port-forward) it serves to the apiserver on loopback.
func runNodes(args []string) int {
	fs := flag.NewFlagSet("nodes", flag.ContinueOnError)
	kubeconfigPath := fs.String("kubeconfig", "", "kubeconfig of the node's identity (system:node:NAME)")
	name := fs.String("name", "effect-kube-node", "node name")
	port := fs.Int("port", 10250, "kubelet port on 127.0.0.1")
	certFile := fs.String("tls-cert-file", "", "kubelet serving certificate")
	keyFile := fs.String("tls-private-key-file", "", "its key")
	clientCA := fs.String("client-ca-file", "", "CA that the apiserver's client certificate must chain to")
	dir := fs.String("dir", "", "folder for the pods' working folders and logs")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "%s nodes: %s\n", time.Now().UTC().Format("15:04:05.000"), fmt.Sprintf(format, a...))
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "effect-kube-node-")
		if err != nil {
			logf("%v", err)
			return 1
		}
		*dir = d
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfigPath)
	if err != nil {
		logf("kubeconfig: %v", err)
		return 1
	}
	cfg.QPS, cfg.Burst = 100, 200
	cfg.UserAgent = "effect-kube-node/" + *name
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		logf("client: %v", err)
		return 1
	}
	klog.SetOutput(os.Stderr)

	n := &node{
		client: client, name: *name, dir: *dir, port: *port, logf: logf,
		pods: map[types.UID]*pod{}, ips: map[string]bool{},
		noSandbox: sandboxSupport(),
	}
	if n.self, err = os.Executable(); err != nil {
		n.noSandbox = err.Error()
	}
	if n.noSandbox != "" {
		logf("pods get no sandbox (%s): every container stands in, exec runs on the host in the pod's folder", n.noSandbox)
	}

	// The kubelet endpoints.
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		logf("serving certificate: %v", err)
		return 1
	}
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}
	if *clientCA != "" {
		caPEM, err := os.ReadFile(*clientCA)
		if err != nil {
			logf("client CA: %v", err)
			return 1
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caPEM)
		tlsCfg.ClientCAs = pool
		tlsCfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		logf("kubelet port: %v", err)
		return 1
	}
	srv := &http.Server{Handler: n.handler(), TLSConfig: tlsCfg, TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){}}
	go func() {
		if err := srv.Serve(tls.NewListener(ln, tlsCfg)); err != nil && err != http.ErrServerClosed {
			logf("kubelet server: %v", err)
			os.Exit(1)
		}
	}()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)

	if err := n.register(ctx); err != nil {
		logf("register node: %v", err)
		return 1
	}
	logf("node %s registered, kubelet endpoint https://127.0.0.1:%d", n.name, n.port)
	go n.heartbeat(ctx)

	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", n.name).String()
	}))
	podInformer := factory.Core().V1().Pods().Informer()
	_, _ = podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { n.observe(obj.(*corev1.Pod)) },
		UpdateFunc: func(_, obj any) { n.observe(obj.(*corev1.Pod)) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				n.forget(p.UID)
			}
		},
	})
	factory.Start(ctx.Done())

	s := <-sig
	logf("%v: stopping every container", s)
	n.shutdown()
	_ = srv.Close()
	return 0
}

type node struct {
	client kubernetes.Interface
	name   string
	dir    string
	port   int
	logf   func(string, ...any)

	self      string // this binary, for the pods' sandboxes
	noSandbox string // why pods get no sandbox here, "" when they do

	mu      sync.Mutex
	pods    map[types.UID]*pod
	ips     map[string]bool
	nextIP  int
	stopped bool
}

func (n *node) nodeObject() *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("8"),
		corev1.ResourceMemory:           resource.MustParse("32Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	now := metav1.Now()
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: n.name,
			Labels: map[string]string{
				"kubernetes.io/hostname":           n.name,
				"kubernetes.io/os":                 "linux",
				"kubernetes.io/arch":               runtime.GOARCH,
				"beta.kubernetes.io/os":            "linux",
				"beta.kubernetes.io/arch":          runtime.GOARCH,
				"node.kubernetes.io/instance-type": "effect-kube",
			},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"},
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity,
			Phase:       corev1.NodeRunning,
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status (effect-kube node stand-in)"),
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
				{Type: corev1.NodeHostName, Address: n.name},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(n.port)}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID:               "effect-kube",
				SystemUUID:              "effect-kube",
				BootID:                  fmt.Sprintf("effect-kube-%d", time.Now().Unix()),
				KernelVersion:           "effect-kube",
				OSImage:                 "effect-kube node stand-in",
				ContainerRuntimeVersion: "effect-kube://1.0.0",
				KubeletVersion:          "v1.35.4",
				KubeProxyVersion:        "",
				OperatingSystem:         "linux",
				Architecture:            runtime.GOARCH,
			},
		},
	}
}

// register creates the Node (or takes over an existing one) and posts its
// status, retrying while the apiserver is not there yet.
func (n *node) register(ctx context.Context) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := n.postNode(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		n.logf("register: %v (retrying)", err)
		time.Sleep(500 * time.Millisecond)
	}
}

func (n *node) postNode(ctx context.Context) error {
	want := n.nodeObject()
	cur, err := n.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cur, err = n.client.CoreV1().Nodes().Create(ctx, want, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		if err != nil {
			cur, err = n.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
		}
	}
	if err != nil {
		return err
	}
	// Keep the conditions' transition times when nothing changed.
	for i, c := range want.Status.Conditions {
		for _, old := range cur.Status.Conditions {
			if old.Type == c.Type && old.Status == c.Status {
				want.Status.Conditions[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	status, err := json.Marshal(map[string]any{"status": want.Status})
	if err != nil {
		return err
	}
	_, err = n.client.CoreV1().Nodes().Patch(ctx, n.name, types.StrategicMergePatchType, status, metav1.PatchOptions{}, "status")
	return err
}

// heartbeat renews the node's Lease every 10 s and posts its status every
// 20 s (a kubelet: 10 s and 5 min; sooner here so that a Ready condition the
// controller-manager set to Unknown while the apiserver was away comes back soon).
func (n *node) heartbeat(ctx context.Context) {
	leaseTick := time.NewTicker(10 * time.Second)
	statusTick := time.NewTicker(20 * time.Second)
	defer leaseTick.Stop()
	defer statusTick.Stop()
	n.renewLease(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-leaseTick.C:
			n.renewLease(ctx)
		case <-statusTick.C:
			if err := n.postNode(ctx); err != nil {
				n.logf("node status: %v", err)
			}
		}
	}
}

func (n *node) renewLease(ctx context.Context) {
	leases := n.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	duration := int32(40)
	holder := n.name
	l, err := leases.Get(ctx, n.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		owner := []metav1.OwnerReference{}
		if node, err := n.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{}); err == nil {
			owner = append(owner, metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID})
		}
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: n.name, Namespace: corev1.NamespaceNodeLease, OwnerReferences: owner},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration, RenewTime: &now},
		}, metav1.CreateOptions{})
		if err != nil {
			n.logf("lease: %v", err)
		}
		return
	}
	if err != nil {
		n.logf("lease: %v", err)
		return
	}
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &holder, &duration, &now
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		n.logf("lease: %v", err)
	}
}

// allocIPLocked hands out 10.244.0.2-254 (a pod's IP; nothing routes to it);
// n.mu is held.
func (n *node) allocIPLocked() string {
	for i := 0; i < 253; i++ {
		n.nextIP = n.nextIP%253 + 1
		ip := fmt.Sprintf("10.244.0.%d", n.nextIP+1)
		if !n.ips[ip] {
			n.ips[ip] = true
			return ip
		}
	}
	return "10.244.0.255"
}

func (n *node) freeIP(ip string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.ips, ip)
}

// observe is every add and update of a pod bound to this node.
func (n *node) observe(obj *corev1.Pod) {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return
	}
	p, known := n.pods[obj.UID]
	if !known {
		if obj.DeletionTimestamp == nil && (obj.Status.Phase == corev1.PodSucceeded || obj.Status.Phase == corev1.PodFailed) {
			// Finished before we (re)started: nothing to run.
			n.mu.Unlock()
			return
		}
		p = newPod(n, obj)
		n.pods[obj.UID] = p
	}
	n.mu.Unlock()
	if obj.DeletionTimestamp != nil {
		p.terminate()
		return
	}
	if !known {
		go p.run()
	}
}

func (n *node) forget(uid types.UID) {
	n.mu.Lock()
	p, ok := n.pods[uid]
	delete(n.pods, uid)
	n.mu.Unlock()
	if ok {
		p.kill()
		n.freeIP(p.ip)
		_ = os.RemoveAll(p.dir)
	}
}

func (n *node) lookup(namespace, name string) *pod {
	n.mu.Lock()
	defer n.mu.Unlock()
	var found *pod
	for _, p := range n.pods {
		if p.namespace == namespace && p.name == name {
			if found == nil || p.created.After(found.created) {
				found = p
			}
		}
	}
	return found
}

func (n *node) shutdown() {
	n.mu.Lock()
	n.stopped = true
	pods := make([]*pod, 0, len(n.pods))
	for _, p := range n.pods {
		pods = append(pods, p)
	}
	n.mu.Unlock()
	for _, p := range pods {
		p.kill()
	}
	_ = filepath.Walk // the folder is up's to remove
}
