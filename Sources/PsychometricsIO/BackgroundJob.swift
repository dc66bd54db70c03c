import Foundation

/// A job on a thread of its own; `wait()` blocks until it has run.
///
/// Not `DispatchQueue.global().async`: on Linux, Swift concurrency's executor runs tasks on libdispatch's global
/// queues, whose threads (as many as cores) it shares with them. `iqscore` runs a command inside a task, so a
/// command waiting for a background job already holds one of those threads; a join waiting for its batch holds
/// another, and a job queued behind them starts only when libdispatch's monitor notices the blocked threads and
/// adds one — a second later (issue 26: `score` on a long file took 1.0 s for 10 sessions with two threads and
/// 0.02 s with one). A thread costs tens of microseconds to start, once per batch of thousands of sessions.
final class BackgroundJob: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var waited = false

    init(_ job: @escaping @Sendable () -> Void) {
        let done = done
        let thread = Thread {
            job()
            done.signal()
        }
        thread.name = "iqscore-background"
        thread.start()
    }

    /// Blocks until the job has run (at once when it had already).
    func wait() {
        guard !waited else { return }
        done.wait()
        waited = true
    }
}

/// Runs one job at a time on a background thread (`BackgroundJob`), where `wait()` blocks until it ends and
/// rethrows its error; or, when not `background`, on the caller's thread in `start`, which throws the job's error
/// itself.
final class BackgroundJoiner: @unchecked Sendable {
    private let background: Bool
    private var job: BackgroundJob?
    private var error: Error?

    init(background: Bool) { self.background = background }

    func start(_ job: @escaping @Sendable () throws -> Void) throws {
        guard background else { return try job() }
        self.job = BackgroundJob {
            do { try job() } catch { self.error = error }
        }
    }

    /// Waits for the running job; throws the error it threw (once).
    func wait() throws {
        guard let job else { return }
        job.wait()
        self.job = nil
        if let error {
            self.error = nil
            throw error
        }
    }

    /// Waits without rethrowing (for clean-up paths).
    func finish() {
        try? wait()
    }
}
