//! The field tables of the Kubernetes types inside a pod template, in Go declaration order.

use super::{Field, GoStruct, Kind, Presence, Zero};

// --- metadata ---------------------------------------------------------------------------------------------

go_struct!(POD_TEMPLATE_SPEC {
    "metadata": Always(Struct) => Struct(OBJECT_META),
    "spec": Always(Struct) => Struct(POD_SPEC),
});

go_struct!(OBJECT_META {
    "name": OmitEmpty, "generateName": OmitEmpty, "namespace": OmitEmpty, "selfLink": OmitEmpty,
    "uid": OmitEmpty, "resourceVersion": OmitEmpty, "generation": OmitEmpty,
    "creationTimestamp": Always(Null), "deletionTimestamp": Pointer, "deletionGracePeriodSeconds": Pointer,
    "labels": OmitEmpty, "annotations": OmitEmpty,
    "ownerReferences": OmitEmpty => List(OWNER_REFERENCE),
    "finalizers": OmitEmpty,
    "managedFields": OmitEmpty => List(MANAGED_FIELDS_ENTRY),
});

go_struct!(OWNER_REFERENCE {
    "apiVersion": Always(Str), "kind": Always(Str), "name": Always(Str), "uid": Always(Str),
    "controller": Pointer, "blockOwnerDeletion": Pointer,
});

go_struct!(MANAGED_FIELDS_ENTRY {
    "manager": OmitEmpty, "operation": OmitEmpty, "apiVersion": OmitEmpty, "time": Pointer,
    "fieldsType": OmitEmpty, "fieldsV1": Pointer, "subresource": OmitEmpty,
});

go_struct!(LABEL_SELECTOR {
    "matchLabels": OmitEmpty,
    "matchExpressions": OmitEmpty => List(LABEL_SELECTOR_REQUIREMENT),
});

go_struct!(LABEL_SELECTOR_REQUIREMENT {
    "key": Always(Str), "operator": Always(Str), "values": OmitEmpty,
});

// --- pod spec ---------------------------------------------------------------------------------------------

go_struct!(POD_SPEC {
    "volumes": OmitEmpty => List(VOLUME),
    "initContainers": OmitEmpty => List(CONTAINER),
    "containers": Always(Null) => List(CONTAINER),
    "ephemeralContainers": OmitEmpty => List(EPHEMERAL_CONTAINER),
    "restartPolicy": OmitEmpty, "terminationGracePeriodSeconds": Pointer, "activeDeadlineSeconds": Pointer,
    "dnsPolicy": OmitEmpty, "nodeSelector": OmitEmpty, "serviceAccountName": OmitEmpty,
    "serviceAccount": OmitEmpty, "automountServiceAccountToken": Pointer, "nodeName": OmitEmpty,
    "hostNetwork": OmitEmpty, "hostPID": OmitEmpty, "hostIPC": OmitEmpty, "shareProcessNamespace": Pointer,
    "securityContext": Pointer => Struct(POD_SECURITY_CONTEXT),
    "imagePullSecrets": OmitEmpty => List(LOCAL_OBJECT_REFERENCE),
    "hostname": OmitEmpty, "subdomain": OmitEmpty,
    "affinity": Pointer => Struct(AFFINITY),
    "schedulerName": OmitEmpty,
    "tolerations": OmitEmpty => List(TOLERATION),
    "hostAliases": OmitEmpty => List(HOST_ALIAS),
    "priorityClassName": OmitEmpty, "priority": Pointer,
    "dnsConfig": Pointer => Struct(POD_DNS_CONFIG),
    "readinessGates": OmitEmpty => List(POD_READINESS_GATE),
    "runtimeClassName": Pointer, "enableServiceLinks": Pointer, "preemptionPolicy": Pointer,
    "overhead": OmitEmpty => QuantityMap,
    "topologySpreadConstraints": OmitEmpty => List(TOPOLOGY_SPREAD_CONSTRAINT),
    "setHostnameAsFQDN": Pointer,
    "os": Pointer => Struct(POD_OS),
    "hostUsers": Pointer,
    "schedulingGates": OmitEmpty => List(NAME_ONLY),
    "resourceClaims": OmitEmpty => List(POD_RESOURCE_CLAIM),
    "resources": Pointer => Struct(RESOURCE_REQUIREMENTS),
    "hostnameOverride": Pointer,
});

go_struct!(POD_SECURITY_CONTEXT {
    "seLinuxOptions": Pointer => Struct(SE_LINUX_OPTIONS),
    "windowsOptions": Pointer => Struct(WINDOWS_OPTIONS),
    "runAsUser": Pointer, "runAsGroup": Pointer, "runAsNonRoot": Pointer,
    "supplementalGroups": OmitEmpty, "supplementalGroupsPolicy": Pointer, "fsGroup": Pointer,
    "sysctls": OmitEmpty => List(SYSCTL),
    "fsGroupChangePolicy": Pointer,
    "seccompProfile": Pointer => Struct(SECCOMP_PROFILE),
    "appArmorProfile": Pointer => Struct(SECCOMP_PROFILE),
    "seLinuxChangePolicy": Pointer,
});

go_struct!(SYSCTL { "name": Always(Str), "value": Always(Str) });

go_struct!(LOCAL_OBJECT_REFERENCE { "name": OmitEmpty });

go_struct!(NAME_ONLY { "name": Always(Str) });

go_struct!(AFFINITY {
    "nodeAffinity": Pointer => Struct(NODE_AFFINITY),
    "podAffinity": Pointer => Struct(POD_AFFINITY),
    "podAntiAffinity": Pointer => Struct(POD_AFFINITY),
});

go_struct!(NODE_AFFINITY {
    "requiredDuringSchedulingIgnoredDuringExecution": Pointer => Struct(NODE_SELECTOR),
    "preferredDuringSchedulingIgnoredDuringExecution": OmitEmpty => List(PREFERRED_SCHEDULING_TERM),
});

go_struct!(NODE_SELECTOR { "nodeSelectorTerms": Always(Null) => List(NODE_SELECTOR_TERM) });

go_struct!(NODE_SELECTOR_TERM {
    "matchExpressions": OmitEmpty => List(LABEL_SELECTOR_REQUIREMENT),
    "matchFields": OmitEmpty => List(LABEL_SELECTOR_REQUIREMENT),
});

go_struct!(PREFERRED_SCHEDULING_TERM {
    "weight": Always(Int), "preference": Always(Struct) => Struct(NODE_SELECTOR_TERM),
});

go_struct!(POD_AFFINITY {
    "requiredDuringSchedulingIgnoredDuringExecution": OmitEmpty => List(POD_AFFINITY_TERM),
    "preferredDuringSchedulingIgnoredDuringExecution": OmitEmpty => List(WEIGHTED_POD_AFFINITY_TERM),
});

go_struct!(POD_AFFINITY_TERM {
    "labelSelector": Pointer => Struct(LABEL_SELECTOR),
    "namespaces": OmitEmpty, "topologyKey": Always(Str),
    "namespaceSelector": Pointer => Struct(LABEL_SELECTOR),
    "matchLabelKeys": OmitEmpty, "mismatchLabelKeys": OmitEmpty,
});

go_struct!(WEIGHTED_POD_AFFINITY_TERM {
    "weight": Always(Int), "podAffinityTerm": Always(Struct) => Struct(POD_AFFINITY_TERM),
});

go_struct!(TOLERATION {
    "key": OmitEmpty, "operator": OmitEmpty, "value": OmitEmpty, "effect": OmitEmpty,
    "tolerationSeconds": Pointer,
});

go_struct!(HOST_ALIAS { "ip": Always(Str), "hostnames": OmitEmpty });

go_struct!(POD_DNS_CONFIG {
    "nameservers": OmitEmpty, "searches": OmitEmpty, "options": OmitEmpty => List(POD_DNS_CONFIG_OPTION),
});

go_struct!(POD_DNS_CONFIG_OPTION { "name": OmitEmpty, "value": Pointer });

go_struct!(POD_READINESS_GATE { "conditionType": Always(Str) });

go_struct!(TOPOLOGY_SPREAD_CONSTRAINT {
    "maxSkew": Always(Int), "topologyKey": Always(Str), "whenUnsatisfiable": Always(Str),
    "labelSelector": Pointer => Struct(LABEL_SELECTOR),
    "minDomains": Pointer, "nodeAffinityPolicy": Pointer, "nodeTaintsPolicy": Pointer,
    "matchLabelKeys": OmitEmpty,
});

go_struct!(POD_OS { "name": Always(Str) });

go_struct!(POD_RESOURCE_CLAIM {
    "name": Always(Str), "resourceClaimName": Pointer, "resourceClaimTemplateName": Pointer,
});

// --- volumes ----------------------------------------------------------------------------------------------

go_struct!(VOLUME {
    "name": Always(Str),
    "hostPath": Pointer => Struct(HOST_PATH),
    "emptyDir": Pointer => Struct(EMPTY_DIR),
    "gcePersistentDisk": Pointer, "awsElasticBlockStore": Pointer, "gitRepo": Pointer,
    "secret": Pointer => Struct(SECRET_VOLUME),
    "nfs": Pointer => Struct(NFS),
    "iscsi": Pointer, "glusterfs": Pointer,
    "persistentVolumeClaim": Pointer => Struct(PVC_VOLUME),
    "rbd": Pointer, "flexVolume": Pointer, "cinder": Pointer, "cephfs": Pointer, "flocker": Pointer,
    "downwardAPI": Pointer => Struct(DOWNWARD_API_VOLUME),
    "fc": Pointer, "azureFile": Pointer,
    "configMap": Pointer => Struct(CONFIG_MAP_VOLUME),
    "vsphereVolume": Pointer, "quobyte": Pointer, "azureDisk": Pointer, "photonPersistentDisk": Pointer,
    "projected": Pointer => Struct(PROJECTED),
    "portworxVolume": Pointer, "scaleIO": Pointer, "storageos": Pointer,
    "csi": Pointer => Struct(CSI),
    "ephemeral": Pointer => Struct(EPHEMERAL),
    "image": Pointer => Struct(IMAGE_VOLUME),
});

go_struct!(HOST_PATH { "path": Always(Str), "type": Pointer });

go_struct!(EMPTY_DIR { "medium": OmitEmpty, "sizeLimit": Pointer => Quantity });

go_struct!(SECRET_VOLUME {
    "secretName": OmitEmpty, "items": OmitEmpty => List(KEY_TO_PATH), "defaultMode": Pointer,
    "optional": Pointer,
});

go_struct!(KEY_TO_PATH { "key": Always(Str), "path": Always(Str), "mode": Pointer });

go_struct!(NFS { "server": Always(Str), "path": Always(Str), "readOnly": OmitEmpty });

go_struct!(PVC_VOLUME { "claimName": Always(Str), "readOnly": OmitEmpty });

go_struct!(DOWNWARD_API_VOLUME {
    "items": OmitEmpty => List(DOWNWARD_API_FILE), "defaultMode": Pointer,
});

go_struct!(DOWNWARD_API_FILE {
    "path": Always(Str),
    "fieldRef": Pointer => Struct(OBJECT_FIELD_SELECTOR),
    "resourceFieldRef": Pointer => Struct(RESOURCE_FIELD_SELECTOR),
    "mode": Pointer,
});

go_struct!(CONFIG_MAP_VOLUME {
    "name": OmitEmpty, "items": OmitEmpty => List(KEY_TO_PATH), "defaultMode": Pointer,
    "optional": Pointer,
});

go_struct!(PROJECTED {
    "sources": Always(Null) => List(VOLUME_PROJECTION), "defaultMode": Pointer,
});

go_struct!(VOLUME_PROJECTION {
    "secret": Pointer => Struct(KEYS_PROJECTION),
    "downwardAPI": Pointer => Struct(DOWNWARD_API_PROJECTION),
    "configMap": Pointer => Struct(KEYS_PROJECTION),
    "serviceAccountToken": Pointer => Struct(SERVICE_ACCOUNT_TOKEN_PROJECTION),
    "clusterTrustBundle": Pointer => Struct(CLUSTER_TRUST_BUNDLE_PROJECTION),
    "podCertificate": Pointer,
});

go_struct!(KEYS_PROJECTION {
    "name": OmitEmpty, "items": OmitEmpty => List(KEY_TO_PATH), "optional": Pointer,
});

go_struct!(DOWNWARD_API_PROJECTION { "items": OmitEmpty => List(DOWNWARD_API_FILE) });

go_struct!(SERVICE_ACCOUNT_TOKEN_PROJECTION {
    "audience": OmitEmpty, "expirationSeconds": Pointer, "path": Always(Str),
});

go_struct!(CLUSTER_TRUST_BUNDLE_PROJECTION {
    "name": Pointer, "signerName": Pointer, "labelSelector": Pointer => Struct(LABEL_SELECTOR),
    "optional": Pointer, "path": Always(Str),
});

go_struct!(CSI {
    "driver": Always(Str), "readOnly": Pointer, "fsType": Pointer, "volumeAttributes": OmitEmpty,
    "nodePublishSecretRef": Pointer => Struct(LOCAL_OBJECT_REFERENCE),
});

go_struct!(EPHEMERAL { "volumeClaimTemplate": Pointer => Struct(PVC_TEMPLATE) });

go_struct!(PVC_TEMPLATE {
    "metadata": Always(Struct) => Struct(OBJECT_META),
    "spec": Always(Struct) => Struct(PVC_SPEC),
});

go_struct!(PVC_SPEC {
    "accessModes": OmitEmpty, "selector": Pointer => Struct(LABEL_SELECTOR),
    "resources": Always(Struct) => Struct(VOLUME_RESOURCE_REQUIREMENTS),
    "volumeName": OmitEmpty, "storageClassName": Pointer, "volumeMode": Pointer,
    "dataSource": Pointer => Struct(TYPED_LOCAL_OBJECT_REFERENCE),
    "dataSourceRef": Pointer => Struct(TYPED_OBJECT_REFERENCE),
    "volumeAttributesClassName": Pointer,
});

go_struct!(VOLUME_RESOURCE_REQUIREMENTS {
    "limits": OmitEmpty => QuantityMap, "requests": OmitEmpty => QuantityMap,
});

go_struct!(TYPED_LOCAL_OBJECT_REFERENCE {
    "apiGroup": Pointer, "kind": Always(Str), "name": Always(Str),
});

go_struct!(TYPED_OBJECT_REFERENCE {
    "apiGroup": Pointer, "kind": Always(Str), "name": Always(Str), "namespace": Pointer,
});

go_struct!(IMAGE_VOLUME { "reference": OmitEmpty, "pullPolicy": OmitEmpty });

// --- containers -------------------------------------------------------------------------------------------

go_struct!(CONTAINER {
    "name": Always(Str), "image": OmitEmpty, "command": OmitEmpty, "args": OmitEmpty,
    "workingDir": OmitEmpty,
    "ports": OmitEmpty => List(CONTAINER_PORT),
    "envFrom": OmitEmpty => List(ENV_FROM_SOURCE),
    "env": OmitEmpty => List(ENV_VAR),
    "resources": Always(Struct) => Struct(RESOURCE_REQUIREMENTS),
    "resizePolicy": OmitEmpty => List(CONTAINER_RESIZE_POLICY),
    "restartPolicy": Pointer, "restartPolicyRules": OmitEmpty,
    "volumeMounts": OmitEmpty => List(VOLUME_MOUNT),
    "volumeDevices": OmitEmpty => List(VOLUME_DEVICE),
    "livenessProbe": Pointer => Struct(PROBE),
    "readinessProbe": Pointer => Struct(PROBE),
    "startupProbe": Pointer => Struct(PROBE),
    "lifecycle": Pointer => Struct(LIFECYCLE),
    "terminationMessagePath": OmitEmpty, "terminationMessagePolicy": OmitEmpty,
    "imagePullPolicy": OmitEmpty,
    "securityContext": Pointer => Struct(SECURITY_CONTEXT),
    "stdin": OmitEmpty, "stdinOnce": OmitEmpty, "tty": OmitEmpty,
});

go_struct!(EPHEMERAL_CONTAINER {
    "name": Always(Str), "image": OmitEmpty, "command": OmitEmpty, "args": OmitEmpty,
    "workingDir": OmitEmpty,
    "ports": OmitEmpty => List(CONTAINER_PORT),
    "envFrom": OmitEmpty => List(ENV_FROM_SOURCE),
    "env": OmitEmpty => List(ENV_VAR),
    "resources": Always(Struct) => Struct(RESOURCE_REQUIREMENTS),
    "resizePolicy": OmitEmpty => List(CONTAINER_RESIZE_POLICY),
    "restartPolicy": Pointer, "restartPolicyRules": OmitEmpty,
    "volumeMounts": OmitEmpty => List(VOLUME_MOUNT),
    "volumeDevices": OmitEmpty => List(VOLUME_DEVICE),
    "livenessProbe": Pointer => Struct(PROBE),
    "readinessProbe": Pointer => Struct(PROBE),
    "startupProbe": Pointer => Struct(PROBE),
    "lifecycle": Pointer => Struct(LIFECYCLE),
    "terminationMessagePath": OmitEmpty, "terminationMessagePolicy": OmitEmpty,
    "imagePullPolicy": OmitEmpty,
    "securityContext": Pointer => Struct(SECURITY_CONTEXT),
    "stdin": OmitEmpty, "stdinOnce": OmitEmpty, "tty": OmitEmpty,
    "targetContainerName": OmitEmpty,
});

go_struct!(CONTAINER_PORT {
    "name": OmitEmpty, "hostPort": OmitEmpty, "containerPort": Always(Int), "protocol": OmitEmpty,
    "hostIP": OmitEmpty,
});

go_struct!(ENV_FROM_SOURCE {
    "prefix": OmitEmpty,
    "configMapRef": Pointer => Struct(OPTIONAL_REFERENCE),
    "secretRef": Pointer => Struct(OPTIONAL_REFERENCE),
});

go_struct!(OPTIONAL_REFERENCE { "name": OmitEmpty, "optional": Pointer });

go_struct!(ENV_VAR {
    "name": Always(Str), "value": OmitEmpty, "valueFrom": Pointer => Struct(ENV_VAR_SOURCE),
});

go_struct!(ENV_VAR_SOURCE {
    "fieldRef": Pointer => Struct(OBJECT_FIELD_SELECTOR),
    "resourceFieldRef": Pointer => Struct(RESOURCE_FIELD_SELECTOR),
    "configMapKeyRef": Pointer => Struct(KEY_SELECTOR),
    "secretKeyRef": Pointer => Struct(KEY_SELECTOR),
    "fileKeyRef": Pointer,
});

go_struct!(OBJECT_FIELD_SELECTOR { "apiVersion": OmitEmpty, "fieldPath": Always(Str) });

go_struct!(RESOURCE_FIELD_SELECTOR {
    "containerName": OmitEmpty, "resource": Always(Str), "divisor": Always(Quantity) => Quantity,
});

go_struct!(KEY_SELECTOR { "name": OmitEmpty, "key": Always(Str), "optional": Pointer });

go_struct!(RESOURCE_REQUIREMENTS {
    "limits": OmitEmpty => QuantityMap, "requests": OmitEmpty => QuantityMap,
    "claims": OmitEmpty => List(RESOURCE_CLAIM),
});

go_struct!(RESOURCE_CLAIM { "name": Always(Str), "request": OmitEmpty });

go_struct!(CONTAINER_RESIZE_POLICY { "resourceName": Always(Str), "restartPolicy": Always(Str) });

go_struct!(VOLUME_MOUNT {
    "name": Always(Str), "readOnly": OmitEmpty, "recursiveReadOnly": Pointer, "mountPath": Always(Str),
    "subPath": OmitEmpty, "mountPropagation": Pointer, "subPathExpr": OmitEmpty,
});

go_struct!(VOLUME_DEVICE { "name": Always(Str), "devicePath": Always(Str) });

go_struct!(PROBE {
    "exec": Pointer => Struct(EXEC_ACTION),
    "httpGet": Pointer => Struct(HTTP_GET_ACTION),
    "tcpSocket": Pointer => Struct(TCP_SOCKET_ACTION),
    "grpc": Pointer => Struct(GRPC_ACTION),
    "initialDelaySeconds": OmitEmpty, "timeoutSeconds": OmitEmpty, "periodSeconds": OmitEmpty,
    "successThreshold": OmitEmpty, "failureThreshold": OmitEmpty,
    "terminationGracePeriodSeconds": Pointer,
});

go_struct!(EXEC_ACTION { "command": OmitEmpty });

go_struct!(HTTP_GET_ACTION {
    "path": OmitEmpty, "port": Always(Int), "host": OmitEmpty, "scheme": OmitEmpty,
    "httpHeaders": OmitEmpty => List(HTTP_HEADER),
});

go_struct!(HTTP_HEADER { "name": Always(Str), "value": Always(Str) });

go_struct!(TCP_SOCKET_ACTION { "port": Always(Int), "host": OmitEmpty });

go_struct!(GRPC_ACTION { "port": Always(Int), "service": Always(Null) });

go_struct!(LIFECYCLE {
    "postStart": Pointer => Struct(LIFECYCLE_HANDLER),
    "preStop": Pointer => Struct(LIFECYCLE_HANDLER),
    "stopSignal": Pointer,
});

go_struct!(LIFECYCLE_HANDLER {
    "exec": Pointer => Struct(EXEC_ACTION),
    "httpGet": Pointer => Struct(HTTP_GET_ACTION),
    "tcpSocket": Pointer => Struct(TCP_SOCKET_ACTION),
    "sleep": Pointer => Struct(SLEEP_ACTION),
});

go_struct!(SLEEP_ACTION { "seconds": Always(Int) });

go_struct!(SECURITY_CONTEXT {
    "capabilities": Pointer => Struct(CAPABILITIES),
    "privileged": Pointer,
    "seLinuxOptions": Pointer => Struct(SE_LINUX_OPTIONS),
    "windowsOptions": Pointer => Struct(WINDOWS_OPTIONS),
    "runAsUser": Pointer, "runAsGroup": Pointer, "runAsNonRoot": Pointer,
    "readOnlyRootFilesystem": Pointer, "allowPrivilegeEscalation": Pointer, "procMount": Pointer,
    "seccompProfile": Pointer => Struct(SECCOMP_PROFILE),
    "appArmorProfile": Pointer => Struct(SECCOMP_PROFILE),
});

go_struct!(CAPABILITIES { "add": OmitEmpty, "drop": OmitEmpty });

go_struct!(SE_LINUX_OPTIONS {
    "user": OmitEmpty, "role": OmitEmpty, "type": OmitEmpty, "level": OmitEmpty,
});

go_struct!(WINDOWS_OPTIONS {
    "gmsaCredentialSpecName": Pointer, "gmsaCredentialSpec": Pointer, "runAsUserName": Pointer,
    "hostProcess": Pointer,
});

go_struct!(SECCOMP_PROFILE { "type": Always(Str), "localhostProfile": Pointer });
