import Foundation
import Psychometrics

extension BatchScorer {
    /// The regrouping pass's consumer in memory: every row's events are grouped by session (in order of the
    /// session's first appearance), then `replay` assembles and scores the sessions in that order, so interleaved
    /// input is scored exactly as contiguous input. Also the second phase of `PartitionedSessions`, one partition
    /// at a time.
    ///
    /// Memory: only responses and failures change a session's outcome; once it has a failure, or more responses
    /// than the bank has items (so some item repeats), its first error is fixed and later events cannot change it:
    /// they are not kept (`GatherSession.settled`), so a session holds at most bank size + 1 events of 32 bytes,
    /// and its first age (a later different age becomes a failure in its place in line order).
    struct GatheredSessions: SessionEventSink {
        var assembler: SessionAssembler
        /// Session ids seen, and per id its session's index in `sessions` (rows without an id have sessions too).
        var index = ByteStringIndex()
        var ordinals: [Int] = []
        var sessions: [GatherSession] = []
        var events: [GatherEvent] = []
        /// Failure reasons by event index.
        var reasons: [Int: String] = [:]
        /// The session the events go to.
        var current = 0

        init(assembler: SessionAssembler) { self.assembler = assembler }

        var sessionsBegun: Int { assembler.report.sessionsRead + sessions.count }

        mutating func take(_ event: SessionEvent) throws {
            switch event {
            case .file(let file, let ageColumn): assembler.ageColumns[file] = ageColumn
            case .enter(let bytes, let file, let line, let column):
                let (s, inserted) = index.index(of: bytes)
                if !inserted {
                    current = ordinals[s]
                    return
                }
                current = sessions.count
                ordinals.append(current)
                let valid = TextFidelity.validString(bytes)
                sessions.append(GatherSession(id: valid ?? TextFidelity.display(bytes), file: file, line: line))
                if valid == nil { keep(failure: TextFidelity.invalidUTF8("session id", bytes), file: file, line: line, column: column) }
            case .orphan(let file, let line, let column, let reason):
                current = sessions.count
                sessions.append(GatherSession(id: "", file: file, line: line))
                keep(failure: reason, file: file, line: line, column: column)
            case .response(let item, let value, let seconds, let file, let line, let column):
                guard !sessions[current].settled else { return }
                sessions[current].responses += 1
                if sessions[current].responses > assembler.owner.scorer.bank.items.count { sessions[current].settled = true }
                events.append(
                    GatherEvent(
                        session: Int32(current), item: Int32(item), value: value, isFailure: false, seconds: seconds,
                        file: Int32(file), column: Int32(column), line: line))
            case .failure(let file, let line, let column, let reason): keep(failure: reason, file: file, line: line, column: column)
            case .age(let age, let file, let line, let column):
                let session = sessions[current]
                if session.settled || session.age == age { return }
                if session.age.isNaN {
                    sessions[current].age = age
                    sessions[current].ageFile = Int32(file)
                    sessions[current].ageLine = line
                    return
                }
                keep(
                    failure: assembler.ageDiffers(
                        first: session.age, file: Int(session.ageFile), line: session.ageLine, second: age, secondFile: file, secondLine: line),
                    file: file, line: line, column: column)
            case .endOfRow: break
            }
        }

        /// A failure of the current session, kept unless its outcome is settled; it settles it.
        mutating func keep(failure reason: String, file: Int, line: Int, column: Int?) {
            guard !sessions[current].settled else { return }
            sessions[current].settled = true
            reasons[events.count] = reason
            events.append(
                GatherEvent(
                    session: Int32(current), item: -1, value: 0, isFailure: true, seconds: .nan,
                    file: Int32(file), column: Int32(column ?? 0), line: line))
        }

        /// Assembles and scores the sessions in order of first appearance, each from its events in input order,
        /// and writes them.
        mutating func replay() throws {
            let count = sessions.count
            var counts = [Int](repeating: 0, count: count + 1)
            for e in events { counts[Int(e.session) + 1] += 1 }
            for s in 0..<count { counts[s + 1] += counts[s] }
            var order = [Int](repeating: 0, count: events.count)
            var next = counts
            for (k, e) in events.enumerated() {
                order[next[Int(e.session)]] = k
                next[Int(e.session)] += 1
            }
            let base = assembler.ordinal + 1
            for s in 0..<count {
                let info = sessions[s]
                var session = SessionAssembler.OpenSession(id: info.id, file: info.file, line: info.line)
                if !info.age.isNaN {
                    session.age = info.age
                    session.ageFile = Int(info.ageFile)
                    session.ageLine = info.ageLine
                }
                assembler.begin(session, ordinal: base + s)
                for k in counts[s]..<counts[s + 1] {
                    let e = events[order[k]]
                    let column = e.column == 0 ? nil : Int(e.column)
                    if e.isFailure {
                        assembler.fail(reasons[order[k]] ?? "invalid row", file: Int(e.file), line: e.line, column: column)
                    } else {
                        assembler.respond(item: Int(e.item), value: e.value, seconds: e.seconds, file: Int(e.file), line: e.line, column: column)
                    }
                }
                try assembler.closeCurrent()
            }
            try assembler.flush()
            try assembler.drainPending()
        }
    }

    /// One kept event of the regrouping pass (a response or a failure), 32 bytes: its session, item, value,
    /// whether it is a failure, seconds (NaN: none), input file, column (0: none) and line.
    struct GatherEvent {
        var session: Int32, item: Int32
        var value: UInt8, isFailure: Bool
        var seconds: Float
        var file: Int32, column: Int32
        var line: Int
    }

    /// A session of the regrouping pass: id, first appearance, and whether its outcome is settled.
    struct GatherSession {
        var id: String
        var file: Int
        var line: Int
        var responses = 0
        /// The session's first non-blank age (NaN: none yet), its line and input file.
        var age = Double.nan
        var ageLine = 0
        var ageFile: Int32 = 0
        var settled = false
    }
}
