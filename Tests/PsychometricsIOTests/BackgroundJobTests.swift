import Foundation
@testable import PsychometricsIO
import Testing

/// Issue 26: `score` on a long file stalled 1.0 s with two threads. The command runs inside a task, on one of
/// libdispatch's global-queue threads (as many as cores, shared with Swift concurrency on Linux); its join waited
/// on another; the batch queued behind them on `DispatchQueue.global()` waited for libdispatch's monitor to add a
/// thread, a second later. Background jobs now run on threads of their own.
@Suite("background jobs do not wait for the global queues", .serialized)
struct BackgroundJobTests {
    /// Runs `body` while every global-queue thread but the caller's is blocked (and the caller, when it is one,
    /// blocks too while `body` waits): the state the stall needed.
    static func withGlobalQueuesBlocked(_ body: () throws -> Void) rethrows {
        let release = DispatchSemaphore(value: 0)
        let blockers = ProcessInfo.processInfo.activeProcessorCount
        for _ in 0..<blockers { DispatchQueue.global().async { release.wait() } }
        defer { for _ in 0..<blockers { release.signal() } }
        Thread.sleep(forTimeInterval: 0.05)
        try body()
    }

    @Test("a job started while the global queues are busy runs at once (it waited 1 s before)")
    func jobRunsAtOnce() throws {
        try Self.withGlobalQueuesBlocked {
            let start = Date()
            let joiner = BackgroundJoiner(background: true)
            let ran = UncheckedFlag()
            try joiner.start { ran.set() }
            try joiner.wait()
            let elapsed = Date().timeIntervalSince(start)
            #expect(ran.value)
            #expect(elapsed < 0.5, "the job took \(elapsed) s to run")
        }
    }

    @Test("a job's error is thrown by wait, once; a job that is not background runs in start")
    func errors() throws {
        struct Failure: Error {}
        let joiner = BackgroundJoiner(background: true)
        try joiner.start { throw Failure() }
        #expect(throws: Failure.self) { try joiner.wait() }
        try joiner.wait()
        let inline = BackgroundJoiner(background: false)
        #expect(throws: Failure.self) { try inline.start { throw Failure() } }
    }
}

/// A flag set on another thread and read after a join (which orders the two).
final class UncheckedFlag: @unchecked Sendable {
    private(set) var value = false
    func set() { value = true }
}
