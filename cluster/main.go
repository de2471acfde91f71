// Command kube-cluster is a whole Kubernetes control plane in one binary, for
// effect-kube's end-to-end tests: etcd (embedded), kube-apiserver,
// kube-controller-manager and kube-scheduler from k8s.io/kubernetes, kubectl,
// and a small kubelet stand-in ("nodes"). `kube-cluster up` starts each piece
// as a child process of this same binary; see README.md.
//
// Busybox style: the first argument names the piece, or, when the binary is
// called through a link named kubectl, it is kubectl.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserverapp "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	schedulerapp "k8s.io/kubernetes/cmd/kube-scheduler/app"

	// What the upstream main packages import for their side effects.
	_ "k8s.io/client-go/plugin/pkg/client/auth"           // kubectl's auth plugins
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	_ "time/tzdata"                                       // CronJob time zones
)

const usage = `usage: kube-cluster <command> [flags]

commands:
  up                  start a whole cluster (etcd, apiserver, controller-manager,
                      scheduler, one node) as child processes; prints KUBECONFIG=...
  etcd                embedded etcd (flags: --data-dir --listen-client --listen-peer)
  apiserver           kube-apiserver (its own flags)
  controller-manager  kube-controller-manager (its own flags)
  scheduler           kube-scheduler (its own flags)
  nodes               the kubelet stand-in (see README.md)
  kubectl             kubectl (also when called through a link named kubectl)
`

func main() {
	name := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
	if name == "kubectl" {
		os.Exit(runKubectl(os.Args))
	}
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	sub, rest := os.Args[1], os.Args[2:]
	// Each upstream command reads os.Args itself in places (kubectl's plugin
	// handling, klog's early verbosity): make them see their own name first.
	switch sub {
	case "up":
		os.Exit(runUp(rest))
	case "etcd":
		os.Exit(runEtcd(rest))
	case "apiserver", "kube-apiserver":
		os.Args = append([]string{"kube-apiserver"}, rest...)
		command := apiserverapp.NewAPIServerCommand()
		command.SetArgs(rest)
		os.Exit(cli.Run(command))
	case "controller-manager", "kube-controller-manager":
		os.Args = append([]string{"kube-controller-manager"}, rest...)
		command := kcmapp.NewControllerManagerCommand()
		command.SetArgs(rest)
		os.Exit(cli.Run(command))
	case "scheduler", "kube-scheduler":
		os.Args = append([]string{"kube-scheduler"}, rest...)
		command := schedulerapp.NewSchedulerCommand()
		command.SetArgs(rest)
		os.Exit(cli.Run(command))
	case "nodes", "node":
		os.Exit(runNodes(rest))
	case "pod-sandbox":
		os.Exit(runPodSandbox(rest))
	case "kubectl":
		os.Exit(runKubectl(append([]string{"kubectl"}, rest...)))
	case "-h", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "kube-cluster: unknown command %q\n%s", sub, usage)
		os.Exit(2)
	}
}

// runKubectl is cmd/kubectl's main.
func runKubectl(args []string) int {
	os.Args = args
	logs.GlogSetter(kubectlcmd.GetLogVerbosity(os.Args)) // nolint:errcheck
	command := kubectlcmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		kubectlutil.CheckErr(err)
	}
	return 0
}
