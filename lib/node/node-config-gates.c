/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The feature gates each kubelet release knows, for featureGates as the kubelet sets them
 * (component-base featuregate SetFromMap): a name its release does not have is
 * "unrecognized feature gate: X", a gate locked to its default cannot be set otherwise
 * ("cannot set feature gate X to false, feature is locked to true"), and setting a GA or
 * deprecated gate is logged ("Setting GA feature gate X=true. It will be removed in a future
 * release."). The kubelet's gate set is the whole of Kubernetes' (pkg/features registers every
 * component's gates, client-go's and component-base's logging gates with it), plus AllAlpha and
 * AllBeta.
 *
 * Sources, in this order of authority:
 *  1. test/compatibility_lifecycle/reference/feature_list.md of kubernetes/kubernetes, as
 *     generated from the versioned gate table in the 1.36 development cycle: the gates, the
 *     release each appeared (its first stage), the release each was locked to its default;
 *  2. the Kubernetes documentation's feature-gate tables for v1.37: the gates added in 1.36 and
 *     1.37, and the releases that took gates to GA or deprecated there;
 *  3. the documentation's "Feature Gates (removed)" page: the last release that knew each
 *     gate removed up to 1.33.
 * Where they leave a release open it is chosen so that nodecm accepts rather than refuses: a
 * gate the 1.36-cycle table has and the v1.37 documentation no longer lists is known through
 * 1.36; a gate GA before 1.33 that the 1.37 documentation still lists but the 1.36-cycle table
 * has dropped (and the 1.34 "removed" page does not name) is known through 1.34 (the code's
 * own notes said "remove in 1.35"). The development branch (1.38) knows what 1.37 knows and has
 * not removed. Gate dependencies (checked by SetFromMap from 1.37 on) are not reproduced.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node-internal.h"

/*
 * A gate: the releases (minor numbers) it is known in, FIRST (0: before 1.32) to LAST (0:
 * still in the newest); LOCK: locked to LOCKED from that release on (31: before 1.32; 0:
 * never); GA, DEPRECATED: the release it became GA or deprecated (31: before 1.32; 0: never).
 * Sorted by name (strcmp), for bsearch.
 */
typedef struct gate_spec {
        const char *name;
        unsigned char first, last, lock;
        bool locked;
        unsigned char ga, deprecated;
} gate_spec;

static const gate_spec gates[] = {
                {"APIListChunking", 0, 32, 31, true, 31, 0},
                {"APIResponseCompression", 0, 0, 0, false, 0, 0},
                {"APIServerIdentity", 0, 0, 0, false, 0, 0},
                {"APIServerTracing", 0, 0, 34, true, 34, 0},
                {"APIServerWebhookAuthenticationToken", 37, 0, 0, false, 0, 0},
                {"APIServingWithRoutine", 0, 0, 0, false, 0, 0},
                {"AdmissionWebhookMatchConditions", 0, 32, 31, true, 31, 0},
                {"AggregatedDiscoveryEndpoint", 0, 32, 31, true, 31, 0},
                {"AggregatedDiscoveryRemoveBetaType", 0, 36, 35, true, 0, 33},
                {"AllAlpha", 0, 0, 0, false, 0, 0},
                {"AllBeta", 0, 0, 0, false, 0, 0},
                {"AllowDNSOnlyNodeCSR", 0, 0, 0, false, 0, 31},
                {"AllowInsecureKubeletCertificateSigningRequests", 0, 0, 0, false, 0, 31},
                {"AllowOverwriteTerminationGracePeriodSeconds", 0, 36, 35, true, 0, 32},
                {"AllowParsingUserUIDFromCertAuth", 33, 0, 0, false, 0, 0},
                {"AllowUnsafeMalformedObjectDeletion", 32, 0, 0, false, 0, 0},
                {"AnonymousAuthConfigurableEndpoints", 0, 0, 34, true, 34, 0},
                {"AnyVolumeDataSource", 0, 0, 33, true, 33, 0},
                {"AppArmor", 0, 32, 31, true, 31, 0},
                {"AppArmorFields", 0, 32, 31, true, 31, 0},
                {"AtomicFIFO", 36, 0, 0, false, 0, 0},
                {"AtomicWriteVolumeUserFields", 37, 0, 0, false, 0, 0},
                {"AuthorizeNodeWithSelectors", 0, 0, 34, true, 34, 0},
                {"AuthorizePodWebsocketUpgradeCreatePermission", 35, 0, 0, false, 0, 0},
                {"AuthorizeWithSelectors", 0, 0, 34, true, 34, 0},
                {"BtreeWatchCache", 32, 0, 33, true, 33, 0},
                {"CBORServingAndStorage", 32, 0, 0, false, 0, 0},
                {"CPUManager", 0, 32, 31, true, 31, 0},
                {"CPUManagerPolicyAlphaOptions", 0, 0, 0, false, 0, 0},
                {"CPUManagerPolicyBetaOptions", 0, 0, 0, false, 0, 0},
                {"CPUManagerPolicyOptions", 0, 0, 33, true, 33, 0},
                {"CRDObservedGenerationTracking", 35, 0, 0, false, 0, 0},
                {"CRDValidationRatcheting", 0, 0, 33, true, 33, 0},
                {"CRIListStreaming", 36, 0, 0, false, 0, 0},
                {"CSIMigrationPortworx", 0, 36, 33, true, 33, 0},
                {"CSIServiceAccountTokenSecrets", 35, 0, 0, false, 36, 0},
                {"CSIVolumeHealth", 0, 0, 0, false, 0, 0},
                {"ChangeContainerStatusOnKubeletRestart", 0, 0, 0, false, 0, 35},
                {"ClearingNominatedNodeNameAfterBinding", 34, 0, 0, false, 0, 0},
                {"ClientsAllowCBOR", 32, 36, 0, false, 0, 0},
                {"ClientsPreferCBOR", 32, 36, 0, false, 0, 0},
                {"CloudControllerManagerWatchBasedRoutesReconciliation", 35, 0, 0, false, 0, 0},
                {"CloudControllerManagerWebhook", 0, 0, 0, false, 0, 0},
                {"ClusterTrustBundle", 0, 0, 0, false, 37, 0},
                {"ClusterTrustBundleProjection", 0, 0, 0, false, 37, 0},
                {"ComponentFlagz", 32, 0, 0, false, 0, 0},
                {"ComponentStatusz", 32, 0, 0, false, 0, 0},
                {"CompositePodGroup", 37, 0, 0, false, 0, 0},
                {"ConcurrentWatchObjectDecode", 0, 0, 0, false, 0, 0},
                {"ConsistentListFromCache", 0, 0, 34, true, 34, 0},
                {"ConstrainedImpersonation", 35, 0, 0, false, 0, 0},
                {"ContainerCheckpoint", 0, 0, 0, false, 0, 0},
                {"ContainerRestartRules", 34, 0, 0, false, 0, 0},
                {"ContainerStopSignals", 33, 0, 0, false, 0, 0},
                {"ContextualLogging", 0, 0, 0, false, 0, 0},
                {"ControllerManagerReleaseLeaderElectionLockOnExit", 36, 0, 0, false, 0, 0},
                {"CoordinatedLeaderElection", 0, 0, 0, false, 0, 0},
                {"CronJobsScheduledAnnotation", 0, 34, 32, true, 32, 0},
                {"CrossNamespaceVolumeDataSource", 0, 0, 0, false, 0, 0},
                {"CustomCPUCFSQuotaPeriod", 0, 0, 0, false, 0, 0},
                {"CustomResourceFieldSelectors", 0, 0, 32, true, 32, 0},
                {"DRAAdminAccess", 32, 0, 36, true, 36, 0},
                {"DRAConsumableCapacity", 34, 0, 0, false, 0, 0},
                {"DRADerivedAttributes", 37, 0, 0, false, 0, 0},
                {"DRADeviceBindingConditions", 34, 0, 0, false, 0, 0},
                {"DRADeviceCompatibilityGroups", 37, 0, 0, false, 0, 0},
                {"DRADeviceTaintRules", 35, 0, 0, false, 37, 0},
                {"DRADeviceTaints", 33, 0, 0, false, 37, 0},
                {"DRAExtendedResource", 34, 0, 37, true, 37, 0},
                {"DRAListTypeAttributes", 36, 0, 0, false, 0, 0},
                {"DRANodeAllocatableResources", 36, 0, 0, false, 0, 0},
                {"DRAOptionalNodeOperations", 37, 0, 0, false, 0, 0},
                {"DRAPartitionableDevices", 33, 0, 0, false, 0, 0},
                {"DRAPartitionableDevicesType", 37, 0, 0, false, 0, 0},
                {"DRAPrioritizedList", 33, 0, 37, true, 36, 0},
                {"DRAResourceClaimDeviceStatus", 32, 0, 0, false, 37, 0},
                {"DRAResourceClaimGranularStatusAuthorization", 36, 0, 0, false, 0, 0},
                {"DRAResourcePoolStatus", 36, 0, 0, false, 0, 0},
                {"DRASchedulerFilterTimeout", 34, 0, 0, false, 0, 0},
                {"DRAWorkloadResourceClaims", 36, 0, 0, false, 0, 0},
                {"DeclarativeValidation", 33, 0, 0, false, 36, 0},
                {"DeclarativeValidationBeta", 36, 0, 0, false, 0, 0},
                {"DeclarativeValidationTakeover", 33, 0, 0, false, 0, 36},
                {"DefaultPodSysctls", 37, 0, 0, false, 0, 0},
                {"DeploymentReplicaSetTerminatingReplicas", 33, 0, 0, false, 0, 0},
                {"DetectCacheInconsistency", 34, 0, 0, false, 0, 0},
                {"DevicePluginCDIDevices", 0, 33, 31, true, 31, 0},
                {"DisableAllocatorDualWrite", 0, 0, 35, true, 34, 0},
                {"DisableCPUQuotaWithExclusiveCPUs", 33, 0, 0, false, 0, 0},
                {"DisableCloudProviders", 0, 32, 31, true, 31, 0},
                {"DisableKubeletCloudCredentialProviders", 0, 32, 31, true, 31, 0},
                {"DisableNodeKubeProxyVersion", 0, 0, 0, false, 0, 31},
                {"DynamicResourceAllocation", 0, 0, 35, true, 34, 0},
                {"EfficientWatchResumption", 0, 32, 31, true, 31, 0},
                {"ElasticIndexedJob", 0, 34, 31, true, 31, 0},
                {"EmptyDirVolumeMode", 37, 0, 0, false, 0, 0},
                {"EnvFiles", 34, 0, 0, false, 0, 0},
                {"EtcdRangeStream", 37, 0, 0, false, 0, 0},
                {"EventedPLEG", 0, 0, 0, false, 0, 0},
                {"ExcludeAdmissionWebhookVirtualResources", 37, 0, 0, false, 0, 0},
                {"ExecProbeTimeout", 0, 0, 35, true, 31, 0},
                {"ExtendWebSocketsToKubelet", 36, 0, 0, false, 0, 0},
                {"ExternalServiceAccountTokenSigner", 32, 0, 0, false, 36, 0},
                {"GRPCContainerProbeTLS", 37, 0, 0, false, 0, 0},
                {"GangScheduling", 35, 36, 0, false, 0, 0},
                {"GenericWorkload", 35, 0, 0, false, 0, 0},
                {"GitRepoVolumeDriver", 0, 0, 0, false, 0, 33},
                {"GracefulNodeShutdown", 0, 0, 0, false, 0, 0},
                {"GracefulNodeShutdownBasedOnPodPriority", 0, 0, 0, false, 0, 0},
                {"H2CContainerProbe", 37, 0, 0, false, 0, 0},
                {"HPAConfigurableTolerance", 33, 0, 0, false, 37, 0},
                {"HPAScaleToZero", 0, 0, 0, false, 0, 0},
                {"HonorPVReclaimPolicy", 0, 36, 33, true, 33, 0},
                {"HostnameOverride", 34, 0, 0, false, 37, 0},
                {"HugepageAwareEviction", 37, 0, 0, false, 0, 0},
                {"ImageMaximumGCAge", 0, 0, 35, true, 35, 0},
                {"ImageVolume", 0, 0, 0, false, 36, 0},
                {"ImageVolumeWithDigest", 35, 0, 0, false, 0, 0},
                {"InOrderInformers", 33, 0, 0, false, 0, 0},
                {"InOrderInformersBatchProcess", 35, 36, 0, false, 0, 0},
                {"InPlacePodLevelResourcesVerticalScaling", 35, 0, 0, false, 0, 0},
                {"InPlacePodVerticalScaling", 0, 0, 35, true, 35, 0},
                {"InPlacePodVerticalScalingAllocatedStatus", 32, 0, 0, false, 0, 33},
                {"InPlacePodVerticalScalingExclusiveCPUs", 32, 0, 0, false, 0, 0},
                {"InPlacePodVerticalScalingExclusiveMemory", 34, 0, 0, false, 0, 0},
                {"InPlacePodVerticalScalingMemoryBackedVolumes", 37, 0, 0, false, 0, 0},
                {"InPlacePodVerticalScalingSchedulerPreemption", 37, 0, 0, false, 0, 0},
                {"InTreePluginPortworxUnregister", 0, 36, 0, false, 0, 0},
                {"InformerResourceVersion", 0, 0, 0, false, 35, 0},
                {"JobBackoffLimitPerIndex", 0, 0, 33, true, 33, 0},
                {"JobManagedBy", 0, 0, 35, true, 35, 0},
                {"JobPodFailurePolicy", 0, 32, 31, true, 31, 0},
                {"JobPodReplacementPolicy", 0, 0, 34, true, 34, 0},
                {"JobSuccessPolicy", 0, 0, 33, true, 33, 0},
                {"KMSv1", 0, 0, 0, false, 0, 31},
                {"KubeProxyDrainingTerminatingNodes", 0, 32, 31, true, 31, 0},
                {"KubeProxyIPVS", 37, 0, 0, false, 0, 37},
                {"KubeProxyNFTablesLocalhostNodePorts", 37, 0, 0, false, 0, 0},
                {"KubeletCgroupDriverFromCRI", 0, 0, 34, true, 34, 0},
                {"KubeletCrashLoopBackOffMax", 32, 0, 0, false, 0, 0},
                {"KubeletEnsureSecretPulledImages", 33, 0, 0, false, 0, 0},
                {"KubeletFineGrainedAuthz", 32, 0, 0, false, 36, 0},
                {"KubeletInUserNamespace", 0, 0, 0, false, 0, 0},
                {"KubeletPSI", 33, 0, 0, false, 36, 0},
                {"KubeletPodResourcesDynamicResources", 0, 0, 0, false, 36, 0},
                {"KubeletPodResourcesGet", 0, 0, 0, false, 36, 0},
                {"KubeletPodResourcesListUseActivePods", 0, 36, 0, false, 0, 34},
                {"KubeletRegistrationGetOnExistsOnly", 0, 36, 0, false, 0, 32},
                {"KubeletSeparateDiskGC", 0, 0, 0, false, 0, 0},
                {"KubeletServiceAccountTokenForCredentialProviders", 33, 0, 0, false, 0, 0},
                {"KubeletTracing", 0, 0, 34, true, 34, 0},
                {"ListFromCacheSnapshot", 33, 0, 0, false, 0, 0},
                {"LocalStorageCapacityIsolationFSQuotaMonitoring", 0, 0, 0, false, 0, 0},
                {"LogarithmicScaleDown", 0, 0, 31, true, 31, 0},
                {"LoggingAlphaOptions", 0, 0, 0, false, 0, 0},
                {"LoggingBetaOptions", 0, 0, 0, false, 0, 0},
                {"ManifestBasedAdmissionControlConfig", 36, 0, 0, false, 0, 0},
                {"MatchLabelKeysInPodAffinity", 0, 0, 33, true, 33, 0},
                {"MatchLabelKeysInPodTopologySpread", 0, 0, 0, false, 0, 0},
                {"MatchLabelKeysInPodTopologySpreadSelectorMerge", 34, 0, 0, false, 0, 0},
                {"MaxUnavailableStatefulSet", 0, 0, 0, false, 0, 0},
                {"MemoryManager", 0, 0, 32, true, 32, 0},
                {"MemoryManagerDriftTolerance", 38, 0, 0, false, 0, 0},
                {"MemoryQoS", 0, 0, 0, false, 0, 0},
                {"MultiCIDRServiceAllocator", 0, 0, 34, true, 33, 0},
                {"MutableCSINodeAllocatableCount", 33, 0, 0, false, 36, 0},
                {"MutablePVNodeAffinity", 35, 0, 0, false, 0, 0},
                {"MutablePodResourcesForSuspendedJobs", 35, 0, 0, false, 0, 0},
                {"MutableSchedulingDirectivesForSuspendedJobs", 35, 0, 0, false, 0, 0},
                {"MutatingAdmissionPolicy", 0, 0, 0, false, 36, 0},
                {"NFTablesProxyMode", 0, 0, 33, true, 33, 0},
                {"NativeHistograms", 36, 0, 0, false, 0, 0},
                {"NodeDeclaredFeatures", 35, 0, 0, false, 37, 0},
                {"NodeInclusionPolicyInPodTopologySpread", 0, 0, 33, true, 33, 0},
                {"NodeLifecycleConditions", 37, 0, 0, false, 0, 0},
                {"NodeLogQuery", 0, 0, 0, false, 36, 0},
                {"NodeSwap", 0, 0, 34, true, 34, 0},
                {"NominatedNodeNameForExpectation", 34, 0, 0, false, 0, 0},
                {"OpenAPIEnums", 0, 0, 0, false, 0, 0},
                {"OpportunisticBatching", 35, 0, 0, false, 0, 0},
                {"OrderedNamespaceDeletion", 0, 0, 34, true, 34, 0},
                {"PDBUnhealthyPodEvictionPolicy", 0, 32, 31, true, 31, 0},
                {"PersistentVolumeClaimUnusedSinceTime", 36, 0, 0, false, 0, 0},
                {"PersistentVolumeLastPhaseTransitionTime", 0, 32, 31, true, 31, 0},
                {"PodAndContainerStatsFromCRI", 0, 0, 0, false, 0, 0},
                {"PodCertificateRequest", 34, 0, 0, false, 37, 0},
                {"PodDeletionCost", 0, 0, 0, false, 0, 0},
                {"PodDisruptionConditions", 0, 33, 31, true, 31, 0},
                {"PodGroupPreemptionPolicy", 37, 0, 0, false, 0, 0},
                {"PodIndexLabel", 0, 34, 32, true, 32, 0},
                {"PodLevelResourceManagers", 36, 0, 0, false, 0, 0},
                {"PodLevelResources", 32, 0, 0, false, 0, 0},
                {"PodLifecycleSleepAction", 0, 0, 34, true, 34, 0},
                {"PodLifecycleSleepActionAllowZero", 32, 0, 34, true, 34, 0},
                {"PodLogsQuerySplitStreams", 32, 0, 0, false, 0, 0},
                {"PodObservedGenerationTracking", 33, 0, 35, true, 35, 0},
                {"PodReadyToStartContainersCondition", 0, 0, 0, false, 37, 0},
                {"PodSchedulingReadiness", 0, 0, 31, true, 31, 0},
                {"PodTopologyLabelsAdmission", 33, 0, 0, false, 0, 0},
                {"PodsAPI", 36, 0, 0, false, 0, 0},
                {"PortForwardWebsockets", 0, 0, 0, false, 0, 0},
                {"PreferSameTrafficDistribution", 33, 0, 35, true, 35, 0},
                {"PreventStaticPodAPIReferences", 34, 0, 0, false, 0, 0},
                {"ProcMountType", 0, 0, 0, false, 36, 0},
                {"QOSReserved", 0, 0, 0, false, 0, 0},
                {"RecoverVolumeExpansionFailure", 0, 0, 34, true, 34, 0},
                {"RecursiveReadOnlyMounts", 0, 0, 33, true, 33, 0},
                {"ReduceDefaultCrashLoopBackOffDecay", 33, 0, 0, false, 0, 0},
                {"RelaxedDNSSearchValidation", 32, 0, 34, true, 34, 0},
                {"RelaxedEnvironmentVariableValidation", 0, 0, 34, true, 34, 0},
                {"RelaxedServiceNameValidation", 34, 0, 0, false, 37, 0},
                {"ReloadKubeletServerCertificateFile", 0, 0, 0, false, 0, 0},
                {"RemainingItemCount", 0, 32, 31, true, 31, 0},
                {"RemoteRequestHeaderUID", 32, 0, 0, false, 0, 0},
                {"ResilientWatchCacheInitialization", 0, 0, 34, true, 34, 0},
                {"ResourceHealthStatus", 0, 0, 0, false, 0, 0},
                {"RestartAllContainersOnContainerExits", 35, 0, 0, false, 0, 0},
                {"RetryGenerateName", 0, 0, 32, true, 32, 0},
                {"RotateKubeletServerCertificate", 0, 0, 0, false, 0, 0},
                {"RuntimeClassInImageCriApi", 0, 0, 0, false, 0, 0},
                {"SELinuxChangePolicy", 32, 0, 0, false, 36, 0},
                {"SELinuxMount", 0, 0, 0, false, 37, 0},
                {"SELinuxMountReadWriteOncePod", 0, 0, 0, false, 36, 0},
                {"SchedulerAsyncAPICalls", 34, 0, 0, false, 0, 0},
                {"SchedulerAsyncPreemption", 32, 0, 0, false, 0, 0},
                {"SchedulerPopFromBackoffQ", 33, 0, 0, false, 0, 0},
                {"SchedulerQueueingHints", 0, 0, 34, true, 34, 0},
                {"SeparateCacheWatchRPC", 0, 0, 0, false, 0, 33},
                {"SeparateTaintEvictionController", 0, 0, 34, true, 34, 0},
                {"ServiceAccountNodeAudienceRestriction", 32, 0, 0, false, 0, 0},
                {"ServiceAccountTokenJTI", 0, 0, 32, true, 32, 0},
                {"ServiceAccountTokenNodeBinding", 0, 0, 33, true, 33, 0},
                {"ServiceAccountTokenNodeBindingValidation", 0, 0, 32, true, 32, 0},
                {"ServiceAccountTokenPodNodeInfo", 0, 0, 32, true, 32, 0},
                {"ServiceTrafficDistribution", 0, 0, 33, true, 33, 0},
                {"ShardedListAndWatch", 36, 0, 0, false, 0, 0},
                {"SidecarContainers", 0, 0, 33, true, 33, 0},
                {"SizeBasedListCostEstimate", 34, 0, 0, false, 0, 0},
                {"StaleControllerConsistencyDaemonSet", 36, 0, 0, false, 0, 0},
                {"StaleControllerConsistencyJob", 36, 0, 0, false, 0, 0},
                {"StaleControllerConsistencyReplicaSet", 36, 0, 0, false, 0, 0},
                {"StaleControllerConsistencyStatefulSet", 36, 0, 0, false, 0, 0},
                {"StatefulSetAutoDeletePVC", 0, 34, 32, true, 32, 0},
                {"StatefulSetRecreateStrategy", 37, 0, 0, false, 0, 0},
                {"StatefulSetSemanticRevisionComparison", 0, 36, 0, false, 0, 0},
                {"StatefulSetStartOrdinal", 0, 34, 31, true, 31, 0},
                {"StorageCapacityScoring", 33, 0, 0, false, 0, 0},
                {"StorageNamespaceIndex", 0, 0, 0, false, 0, 33},
                {"StorageVersionAPI", 0, 0, 0, false, 0, 0},
                {"StorageVersionHash", 0, 0, 0, false, 0, 0},
                {"StorageVersionMigrator", 0, 0, 0, false, 0, 0},
                {"StreamingCollectionEncodingToJSON", 33, 0, 34, true, 34, 0},
                {"StreamingCollectionEncodingToProtobuf", 33, 0, 34, true, 34, 0},
                {"StrictCostEnforcementForVAP", 0, 34, 32, true, 32, 0},
                {"StrictCostEnforcementForWebhooks", 0, 34, 32, true, 32, 0},
                {"StrictIPCIDRValidation", 33, 0, 0, false, 0, 0},
                {"StructuredAuthenticationConfiguration", 0, 0, 34, true, 34, 0},
                {"StructuredAuthenticationConfigurationEgressSelector", 34, 0, 0, false, 0, 0},
                {"StructuredAuthenticationConfigurationJWKSMetrics", 35, 0, 0, false, 0, 0},
                {"StructuredAuthorizationConfiguration", 0, 0, 32, true, 32, 0},
                {"SupplementalGroupsPolicy", 0, 0, 35, true, 35, 0},
                {"SystemdWatchdog", 32, 0, 35, true, 35, 0},
                {"TaintTolerationComparisonOperators", 35, 0, 0, false, 0, 0},
                {"TokenRequestServiceAccountUIDValidation", 34, 0, 0, false, 0, 0},
                {"TopologyAwareHints", 0, 0, 33, true, 33, 0},
                {"TopologyAwareWorkloadScheduling", 36, 0, 0, false, 0, 0},
                {"TopologyManagerPolicyAlphaOptions", 0, 0, 0, false, 0, 0},
                {"TopologyManagerPolicyBetaOptions", 0, 0, 0, false, 0, 0},
                {"TopologyManagerPolicyOptions", 0, 0, 0, false, 32, 0},
                {"TranslateStreamCloseWebsocketRequests", 0, 0, 0, false, 0, 0},
                {"UnauthenticatedHTTP2DOSMitigation", 0, 0, 0, false, 0, 0},
                {"UnknownVersionInteroperabilityProxy", 0, 0, 0, false, 0, 0},
                {"UnlockWhileProcessingFIFO", 36, 0, 0, false, 0, 0},
                {"UserNamespacesHostNetworkSupport", 35, 0, 0, false, 0, 0},
                {"UserNamespacesSupport", 0, 0, 0, false, 36, 0},
                {"VolumeAttributesClass", 0, 0, 36, true, 34, 0},
                {"VolumeBindMountOptions", 37, 0, 0, false, 0, 0},
                {"VolumeCapacityPriority", 0, 32, 0, true, 0, 0},
                {"VolumeLimitScaling", 35, 0, 0, false, 0, 0},
                {"WatchBookmark", 0, 32, 31, true, 31, 0},
                {"WatchCacheInitializationPostStartHook", 0, 0, 0, false, 37, 0},
                {"WatchFromStorageWithoutResourceVersion", 0, 0, 33, false, 0, 33},
                {"WatchList", 0, 0, 0, false, 0, 0},
                {"WatchListClient", 0, 0, 0, false, 0, 0},
                {"WinDSR", 0, 0, 34, true, 34, 0},
                {"WinOverlay", 0, 0, 34, true, 34, 0},
                {"WindowsCPUAndMemoryAffinity", 32, 0, 0, false, 0, 0},
                {"WindowsGracefulNodeShutdown", 32, 0, 0, false, 0, 0},
                {"WindowsHostNetwork", 0, 0, 0, false, 0, 33},
                {"WorkloadWithJob", 36, 0, 0, false, 0, 0},
};

static int cmp_gate(const void *k, const void *e)
{
        return strcmp(k, ((const gate_spec *)e)->name);
}

static const gate_spec *gate_find(const char *name)
{
        return bsearch(name, gates, NCM_ELEMENTSOF(gates), sizeof(gates[0]), cmp_gate);
}

int ncm__node_gate_set(ncm_node_config *c, const char *path, const char *name, bool value,
                       int minor, ncm_error *err)
{
        const gate_spec *g = gate_find(name);
        const char *stage;

        if (!g || (g->first && minor < g->first) || (g->last && minor > g->last)) {
                char hint[96] = "";
                if (g && g->first && minor < g->first)
                        snprintf(hint, sizeof(hint), " (kubelet 1.%d: it came in 1.%d)", minor,
                                 g->first);
                else if (g)
                        snprintf(hint, sizeof(hint),
                                 " (kubelet 1.%d: 1.%d was the last to know it)", minor, g->last);
                return ncm_error_set(err, EINVAL,
                                     "%s: failed to set feature gates from initial flags-based "
                                     "config: unrecognized feature gate: %s%s",
                                     path, name, hint);
        }
        if (g->lock && minor >= g->lock && value != g->locked)
                return ncm_error_set(err, EINVAL,
                                     "%s: cannot set feature gate %s to %s, feature is locked to "
                                     "%s",
                                     path, name, value ? "true" : "false",
                                     g->locked ? "true" : "false");
        stage = g->deprecated && minor >= g->deprecated ? "deprecated"
                : g->ga && minor >= g->ga               ? "GA"
                                                        : NULL;
        if (!stage)
                return 0;
        return ncm__node_config_warn(c, err,
                                     "%s: Setting %s feature gate %s=%s. It will be removed in a "
                                     "future release.",
                                     path, stage, name, value ? "true" : "false");
}

bool ncm__node_gate_known(const char *name, int minor)
{
        const gate_spec *g = gate_find(name);
        return g && !(g->first && minor < g->first) && !(g->last && minor > g->last);
}
