// Package netsim is nicc's closed-loop network simulator: a packet-level discrete-event
// simulation of hosts on one output-queued switch, with each sender NIC's CC engine in the
// loop, to judge a CC policy (a float teacher, a compiled policy's integer model, the
// firmware itself, or the Swift and DCQCN references) by what it does to the network.
//
// # The model
//
//   - Time is integer picoseconds; events fire in (time, order of scheduling), so a run is
//     a function of its scenario, controller, Config and seed, bit for bit.
//   - Hosts: each flow has a rate limiter; a host's scheduler sends the burst of the flow
//     due first (flows due together in the order they became ready: round-robin) on the
//     host's uplink at line rate. A burst is what the flow's rate sends in BurstNs, in whole
//     MTU packets, one to BurstBytes; an RTT probe follows a burst when the flow has none in
//     flight, so a flow decides about once an RTT however fast it sends (a probe after every
//     burst made a fast flow cut its rate many times on one stale RTT, and a slow flow wait
//     milliseconds between decisions). That is how DOCA PCC's engine probes: the handler's
//     rtt_req asks for an RTT probe, which the NIC's TX pipe sends with the flow's next
//     transmission (the TX event that carries it is flagged RTT_REQ_SENT), so a flow at the
//     minimum rate decides once a burst. The next burst is due one burst's worth of time at
//     the flow's rate after this one started.
//   - Probes (Config.Probe): with the data, as above, by default after it (ProbeWithTX) or
//     ahead of it (ProbeBeforeTX, CCsim's: docs/CALIBRATION.md); or at once
//     (ProbeAtOnce), each on its own as soon as the decision on the last reply ends, so that
//     every flow decides once an RTT whatever its rate. Measured at 8192→1 with rlcc_adpg
//     over 50 ms, at once: the probes, 512 KB an RTT, take the receiver's link, and goodput
//     falls to 0.19 (4 KB MTU) or 0.41 (1 KB); with the data at a 1 KB MTU it is 0.94 with
//     the queue at 25 µs. A slow flow deciding once a packet is the engine's nature, and the
//     MTU sets how often: at 8192→1 every 2.7 ms at 4 KB, every 0.67 ms at 1 KB. CCsim does
//     the same in 4 KB: observed at its 128→1 (NVlabs/RLCC, RL_Eval_ManyToOne run 21, a
//     fixed AIMD law answering its agent protocol), a flow under 1/64 of line rate reports one
//     RTT a TX event of 4096 bytes, 4096 bytes over its rate apart (85.8 µs at 1/256: 83.9
//     expected), and a faster one an RTT and about 3.3 µs apart, its next TX after the reply
//     (testdata/ccsim, held to by TestProbePacingAsCCsim).
//   - Host delay (Config.HostDelayNs): each NIC's pipeline delays every packet it sends
//     before the wire and every packet it receives before it acts on it, so the empty path's
//     RTT gains four (CCsim's empty path is about 8 µs, this network's 4 without it).
//   - NIC timing (Config.TurnaroundNs, Config.TXLeadNs): a probe's reply may reach the CC
//     engine some time after it arrives, the flow's next probe held as long, and a flow's
//     bursts may leave a fixed time sooner than its rate allows. CCsim's NIC does both: its
//     reports come an RTT and at least 2.73 µs apart, and its 4 KB TX events 147.4 ns sooner
//     than the rate (docs/CALIBRATION.md); its link idles that much more between a queue's
//     swings.
//   - Starts: a scenario's flows start when it says (many-to-one's and all-to-all's all at
//     0); Scenario.Stagger delays each by its own seeded draw within a window, as CCsim
//     starts its flows in U(1, 2) ms.
//   - Clocks: with Config.ClockPPM each host's NIC has a clock of its own, off its nominal
//     frequency by a seeded amount within ±ClockPPM (nicc sim's --clock-ppm, by default
//     ±100 ppm, IEEE 802.3's tolerance); its rate limiters pace, its CC timers tick, its CNPs
//     are spaced (as a receiver) and its RTTs are read (as a sender: real time ÷ its clock's
//     period) by it.
//     Without it every host shares one ideal clock, and flows of different hosts that start
//     together and decide alike send in lockstep for the whole run: a herd of them measures
//     the queue of its own synchronised bursts (a piecewise-constant policy, such as
//     distilled trees, kept such herds at the minimum rate at 128→1, where the continuous
//     teacher drifted apart).
//   - Switch: one FIFO per egress port, packet by packet, sharing a BufferBytes buffer;
//     data that does not fit is dropped (drop-tail), and with Config.BufferAlpha also data
//     that would take its port's queue past α times the buffer still free (a dynamic
//     threshold). Config.PFC pauses the senders' data before that: every sender while the
//     buffer is past Xoff, or with Config.PFCPerPort a host alone while its bytes in its
//     switch pass its ingress port's share of the buffer, as PFC pauses per port. With
//     Config.ECN, data is marked RED style on the egress queue's bytes at arrival. Probes,
//     probe replies and CNPs are never dropped (switches keep headroom for them) but wait in
//     the same FIFOs, so a probe measures the queue.
//   - Receivers reply to a probe at once and send a CNP for a marked packet, at most one per
//     flow per 50 µs. Replies and CNPs take their serialization and the link's propagation
//     but no turn in the receiver's data scheduler.
//   - Topology: one switch, or with Config.FatTree a two-level fat tree (ToRs of hosts, each
//     ToR linked to each spine by parallel links at the hosts' rate, every switch with its own
//     BufferBytes buffer). A flow between racks takes one spine and one link each way, chosen
//     by a hash of the flow and its direction (ECMP), so its packets never reorder; a flow
//     within a rack stays in its ToR. The base RTT is then the inter-rack path's: eight links.
//     PFC pauses every sender while any switch's buffer is past Xoff.
//   - Loss (Config.GoBackN): by default dropped data is lost and whatever arrives counts as
//     delivered. With GoBackN the flows recover it as RoCE's reliable connection does: each
//     data packet carries its first byte's sequence number; the receiver delivers the next
//     expected byte only, discards a packet beyond it (answering the first of a gap with one
//     NACK for the expected byte, sent as a control packet) or one already delivered, and
//     acknowledges a finite flow's last byte (RoCE acknowledges a message's last packet); the
//     sender learns the receiver's next expected byte from each NACK, probe reply and that
//     ACK (a cumulative acknowledgement: RoCE coalesces its ACKs, nicc carries one on each reply),
//     goes back to it on a NACK, and goes back to the first byte not acknowledged when none
//     has been for Config.RTONs (RoCE's local ACK timeout, default 1 ms: a lost
//     retransmission draws no second NACK, and a lost tail none at all). Goodput counts
//     in-order bytes only, and each NACK reaches the controller as nicsdk.EvNACK.
//   - The CC engine of each sender NIC: Threads hardware threads serve a FIFO of at most
//     QueueDepth events; an event that finds both full is dropped and counted. A decision
//     occupies a thread for its latency (the controller's measured one, such as firmware
//     cycles at the core's clock, or Config.LatencyNs); the flow's context changes when the
//     decision runs, its rate when the decision ends. Events are RTT probe replies, CNPs,
//     NACKs (Config.GoBackN), and per-flow timer ticks for controllers that ask for them
//     (EvTX, with the bytes sent), or with Config.TXEvents a TX event for every burst (EvTX
//     with its bytes), as DOCA PCC's engine delivers them.
//   - Actions (Config.Actions): a function run at a simulated time, from outside the network,
//     such as an operator setting a controller's parameters on the live NICs. It runs before
//     any event of its time the run scheduled, so decisions that start at or after it see
//     what it did, and decisions already running finish as they started.
//
// Defaults (Defaults): 100 Gb/s links, 1 µs propagation per link (base RTT about 4.7 µs
// with serialization), 4 KB MTU, 64-byte probes, bursts of up to 16 KB (4 µs of the rate),
// a 5 MB buffer, 16 engine threads with a 1024-event queue, 20 ms simulated.
//
// # Metrics
//
// Result's figures are measured over the window from WarmupNs (default half the run) to the
// end, so that the start, when every flow begins at its initial rate, does not count: switch
// utilization (SU), normalised goodput, fairness min/max × 100 (FR) and Jain's index over the
// flows that send throughout, queue latency (mean and p99, 10 ns bins), the drop rate (DR),
// CC decisions and events dropped, and for long-short scenarios the long flow's recovery to
// 95% of line rate after the last short flow ends.
//
// # Workloads
//
// Workload is hosts starting flows by a Poisson process at a given load of their links, each
// to a host drawn at random, with sizes drawn from a published flow-size table (SizeCDFs:
// DCTCP's web search and Facebook's Hadoop, as the HPCC paper tabulates them; linear between
// the table's points). Its Result adds FCT: the slowdown (completion time over the flow's time
// alone on the empty network at line rate) of the flows started in the window, by size
// bucket, mean and p99, and how many had not finished when the run ended. Without GoBackN a
// flow that lost data never finishes.
//
// # The references
//
// Swift (Algorithm 1 on a paced window: a delay target with flow and hop scaling, additive
// increase per RTT, a bounded decrease at most once an RTT) and DCQCN (ECN, CNP, α, fast
// recovery / additive / hyper increase) are written from their papers and keep their state
// in the flow context as the NIC would. Measured here: both converge on 16→1 (SU ≥ 90%,
// Jain ≥ 0.9); Swift's mean RTT is within 30% of its fixed point (the RTT at the target of
// the fair window) at 16 and 64 flows, and it drops nothing from 16 to 4096 flows on the
// lossy network, its queue rising with the flows as flow scaling raises the target (20 µs at
// 128, 54 µs at 4096), unfair past a few hundred flows: a window under a packet samples the
// delay once a packet. DCQCN assumes RoCE's lossless network:
// on the lossy one, at 1024→1, a flow's marked packets, and so its CNPs, arrive once every
// few hundred µs, fast recovery undoes each cut before the next, and the buffer stays full
// and drops; with Config.PFC (the senders pause when the buffer passes Xoff, which leaves
// headroom for two bursts a host in flight) it drops nothing, at the unfairness PFC brings.
package netsim
