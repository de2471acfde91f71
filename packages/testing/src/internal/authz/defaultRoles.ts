/**
 * The aggregated ClusterRoles every cluster starts with (admin, edit, view and the
 * system:aggregate-to-* roles whose rules they gather), as kube-apiserver 1.35 writes them
 * (read from its bootstrap policy on the real control plane; a rule's fields in the order the
 * API server writes them). The fake's aggregation fills
 * admin, edit and view from them, as the clusterrole-aggregation controller does.
 *
 * @internal
 */

/** @internal */
export interface DefaultRole {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly aggregate?: Readonly<Record<string, string>>
  readonly rules?: ReadonlyArray<Readonly<Record<string, ReadonlyArray<string>>>>
}

/** @internal */
export const aggregatedRoles: ReadonlyArray<DefaultRole> = [
  {
    "name": "admin",
    "labels": {},
    "aggregate": {
      "rbac.authorization.k8s.io/aggregate-to-admin": "true"
    }
  },
  {
    "name": "edit",
    "labels": {
      "rbac.authorization.k8s.io/aggregate-to-admin": "true"
    },
    "aggregate": {
      "rbac.authorization.k8s.io/aggregate-to-edit": "true"
    }
  },
  {
    "name": "view",
    "labels": {
      "rbac.authorization.k8s.io/aggregate-to-edit": "true"
    },
    "aggregate": {
      "rbac.authorization.k8s.io/aggregate-to-view": "true"
    }
  },
  {
    "name": "system:aggregate-to-admin",
    "labels": {
      "rbac.authorization.k8s.io/aggregate-to-admin": "true"
    },
    "rules": [
      {
        "verbs": [
          "create"
        ],
        "apiGroups": [
          "authorization.k8s.io"
        ],
        "resources": [
          "localsubjectaccessreviews"
        ]
      },
      {
        "verbs": [
          "create",
          "delete",
          "deletecollection",
          "get",
          "list",
          "patch",
          "update",
          "watch"
        ],
        "apiGroups": [
          "rbac.authorization.k8s.io"
        ],
        "resources": [
          "rolebindings",
          "roles"
        ]
      }
    ]
  },
  {
    "name": "system:aggregate-to-edit",
    "labels": {
      "rbac.authorization.k8s.io/aggregate-to-edit": "true"
    },
    "rules": [
      {
        "verbs": [
          "get",
          "list",
          "watch"
        ],
        "apiGroups": [
          ""
        ],
        "resources": [
          "pods/attach",
          "pods/exec",
          "pods/portforward",
          "pods/proxy",
          "secrets",
          "services/proxy"
        ]
      },
      {
        "verbs": [
          "impersonate"
        ],
        "apiGroups": [
          ""
        ],
        "resources": [
          "serviceaccounts"
        ]
      },
      {
        "verbs": [
          "create",
          "delete",
          "deletecollection",
          "patch",
          "update"
        ],
        "apiGroups": [
          ""
        ],
        "resources": [
          "pods",
          "pods/attach",
          "pods/exec",
          "pods/portforward",
          "pods/proxy"
        ]
      },
      {
        "verbs": [
          "create"
        ],
        "apiGroups": [
          ""
        ],
        "resources": [
          "pods/eviction"
        ]
      },
      {
        "verbs": [
          "create",
          "delete",
          "deletecollection",
          "patch",
          "update"
        ],
        "apiGroups": [
          ""
        ],
        "resources": [
          "configmaps",
          "persistentvolumeclaims",
          "replicationcontrollers",
          "replicationcontrollers/scale",
          "secrets",
          "serviceaccounts",
          "services",
          "services/proxy"
        ]
      },
      {
        "verbs": [
          "create"
        ],
        "apiGroups": [
          ""
        ],
        "resources": [
          "serviceaccounts/token"
        ]
      },
      {
        "verbs": [
          "create",
          "delete",
          "deletecollection",
          "patch",
          "update"
        ],
        "apiGroups": [
          "",
          "events.k8s.io"
        ],
        "resources": [
          "events"
        ]
      },
      {
        "verbs": [
          "create",
          "delete",
          "deletecollection",
          "patch",
          "update"
        ],
        "apiGroups": [
          "apps"
        ],
        "resources": [
          "daemonsets",
          "deployments",
          "deployments/rollback",
          "deployments/scale",
          "replicasets",
          "replicasets/scale",
          "statefulsets",
          "statefulsets/scale"
        ]
      },
      {
        "verbs": [
          "create",
          "delete",
          "deletecollection",
          "patch",
          "update"
        ],
        "apiGroups": [
          "autoscaling"
        ],
        "resources": [
          "horizontalpodautoscalers"
        ]
      },
      {
        "verbs": [
          "create",
          "delete",
          "deletecollection",
          "patch",
          "update"
        ],
        "apiGroups": [
          "batch"
        ],
        "resources": [
          "cronjobs",
          "jobs"
        ]
      },
      {
        "verbs": [
          "create",
          "delete",
          "deletecollection",
          "patch",
          "update"
        ],
        "apiGroups": [
          "extensions"
        ],
        "resources": [
          "daemonsets",
          "deployments",
          "deployments/rollback",
          "deployments/scale",
          "ingresses",
          "networkpolicies",
          "replicasets",
          "replicasets/scale",
          "replicationcontrollers/scale"
        ]
      },
      {
        "verbs": [
          "create",
          "delete",
          "deletecollection",
          "patch",
          "update"
        ],
        "apiGroups": [
          "policy"
        ],
        "resources": [
          "poddisruptionbudgets"
        ]
      },
      {
        "verbs": [
          "create",
          "delete",
          "deletecollection",
          "patch",
          "update"
        ],
        "apiGroups": [
          "networking.k8s.io"
        ],
        "resources": [
          "ingresses",
          "networkpolicies"
        ]
      },
      {
        "verbs": [
          "create",
          "delete",
          "deletecollection",
          "get",
          "list",
          "patch",
          "update",
          "watch"
        ],
        "apiGroups": [
          "coordination.k8s.io"
        ],
        "resources": [
          "leases"
        ]
      },
      {
        "verbs": [
          "create",
          "delete",
          "deletecollection",
          "patch",
          "update"
        ],
        "apiGroups": [
          "resource.k8s.io"
        ],
        "resources": [
          "resourceclaims",
          "resourceclaimtemplates"
        ]
      }
    ]
  },
  {
    "name": "system:aggregate-to-view",
    "labels": {
      "rbac.authorization.k8s.io/aggregate-to-view": "true"
    },
    "rules": [
      {
        "verbs": [
          "get",
          "list",
          "watch"
        ],
        "apiGroups": [
          ""
        ],
        "resources": [
          "configmaps",
          "endpoints",
          "persistentvolumeclaims",
          "persistentvolumeclaims/status",
          "pods",
          "replicationcontrollers",
          "replicationcontrollers/scale",
          "serviceaccounts",
          "services",
          "services/status"
        ]
      },
      {
        "verbs": [
          "get",
          "list",
          "watch"
        ],
        "apiGroups": [
          ""
        ],
        "resources": [
          "bindings",
          "limitranges",
          "namespaces/status",
          "pods/log",
          "pods/status",
          "replicationcontrollers/status",
          "resourcequotas",
          "resourcequotas/status"
        ]
      },
      {
        "verbs": [
          "get",
          "list",
          "watch"
        ],
        "apiGroups": [
          ""
        ],
        "resources": [
          "namespaces"
        ]
      },
      {
        "verbs": [
          "get",
          "list",
          "watch"
        ],
        "apiGroups": [
          "",
          "events.k8s.io"
        ],
        "resources": [
          "events"
        ]
      },
      {
        "verbs": [
          "get",
          "list",
          "watch"
        ],
        "apiGroups": [
          "discovery.k8s.io"
        ],
        "resources": [
          "endpointslices"
        ]
      },
      {
        "verbs": [
          "get",
          "list",
          "watch"
        ],
        "apiGroups": [
          "apps"
        ],
        "resources": [
          "controllerrevisions",
          "daemonsets",
          "daemonsets/status",
          "deployments",
          "deployments/scale",
          "deployments/status",
          "replicasets",
          "replicasets/scale",
          "replicasets/status",
          "statefulsets",
          "statefulsets/scale",
          "statefulsets/status"
        ]
      },
      {
        "verbs": [
          "get",
          "list",
          "watch"
        ],
        "apiGroups": [
          "autoscaling"
        ],
        "resources": [
          "horizontalpodautoscalers",
          "horizontalpodautoscalers/status"
        ]
      },
      {
        "verbs": [
          "get",
          "list",
          "watch"
        ],
        "apiGroups": [
          "batch"
        ],
        "resources": [
          "cronjobs",
          "cronjobs/status",
          "jobs",
          "jobs/status"
        ]
      },
      {
        "verbs": [
          "get",
          "list",
          "watch"
        ],
        "apiGroups": [
          "extensions"
        ],
        "resources": [
          "daemonsets",
          "daemonsets/status",
          "deployments",
          "deployments/scale",
          "deployments/status",
          "ingresses",
          "ingresses/status",
          "networkpolicies",
          "replicasets",
          "replicasets/scale",
          "replicasets/status",
          "replicationcontrollers/scale"
        ]
      },
      {
        "verbs": [
          "get",
          "list",
          "watch"
        ],
        "apiGroups": [
          "policy"
        ],
        "resources": [
          "poddisruptionbudgets",
          "poddisruptionbudgets/status"
        ]
      },
      {
        "verbs": [
          "get",
          "list",
          "watch"
        ],
        "apiGroups": [
          "networking.k8s.io"
        ],
        "resources": [
          "ingresses",
          "ingresses/status",
          "networkpolicies"
        ]
      },
      {
        "verbs": [
          "get",
          "list",
          "watch"
        ],
        "apiGroups": [
          "resource.k8s.io"
        ],
        "resources": [
          "resourceclaims",
          "resourceclaims/status",
          "resourceclaimtemplates"
        ]
      }
    ]
  }
]
