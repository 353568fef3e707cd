// Package pull holds propagit's pull-mode end-to-end scenarios (issue 7): a
// `propagit agent` inside a member reads only its own Work — from the Git
// work branch or from a Work custom resource on a hub — applies it with the
// member's own credentials, and reports status and a heartbeat that the
// controller reads.
//
// Everything is real: members are etcd and kube-apiserver processes from
// internal/testenv, the Git remote is `git http-backend` over smart HTTP
// from internal/gitserver, clients are go-git and client-go, and objects
// are server-side applied. The controller and the agents run in-process;
// each test starts its own members, remote, controller and agents, and
// stops them when it ends, so tests share nothing:
//
//	go test ./e2e/pull/ -run TestPull -v -timeout 20m
//	go test ./e2e/pull/ -run '^$' -bench BenchmarkPull -benchtime 50x
//
// Every test is named TestPull… so the group runs on its own with
// `go test ./e2e/... -run TestPull`; the pull isolation scenarios of issue
// 15 are TestTrust… (`go test ./e2e/pull/ -run TestTrust`), the signed
// Works of issue 31 TestSupplyChain…. Waits poll a condition until a deadline
// and report the last state they saw; there are no sleeps. Namespaces are
// random and no test starts more than three members. Workloads are
// ConfigMaps, except in the mixed push/pull scenario, which rolls out the
// quickstart's nginx Deployment on members running kube-controller-manager,
// kube-scheduler and kwok.
//
// Scenarios (issue 7, "Bad input and faults"):
//
//	TestPullMixedPushAndPull         one push and two pull members, overrides per cluster
//	TestPullAgentRestartNoStorm      steady state and restart write nothing to the member
//	TestPullSourceUnreachable        the Git server goes away and returns
//	TestPullCRStoreHeartbeat         Work CRs on a hub; a stale heartbeat makes the member not Ready
//	TestPullStaleHeartbeatFailover   failover counts from when the heartbeat went stale
//	TestPullManyAgentsStatus         20 agents writing status at once
//	TestPullNewerFormatRefused       a Work of a newer format is refused whole
//	TestTrustPullCRStoreIsolation    an agent's hub identity gets 403 on another member's Work and status
//	TestTrustPullGitStoreIsolation   one works repository per member; a forged status is never read
//	TestTrustPullCRStoreMovesLegacyWorks  Works of the old shared namespace moved, inventory kept
//	TestSupplyChainPullRefusesForgedWork  a Work forged on the works branch is refused, reported; a genuine one applies
//	TestSupplyChainPullForgedWorkMemberRepos  the same with a member's own credential in its own works repository
//
// BenchmarkPullAgentSteadyState measures one poll of an unchanged work
// branch holding 10 or 200 clusters.
package pull
