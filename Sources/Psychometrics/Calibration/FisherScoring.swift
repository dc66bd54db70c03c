import Foundation

/// The per-item M-steps' maximiser, one implementation for `ItemModelEngine` and `BifactorEngine`: Fisher scoring
/// with step halving. From x, the step d = F⁻¹g (g the gradient of the objective, F its expected information,
/// both from `direction`) is tried at t = 1, ½, ¼, … (up to 40 halvings) until the candidate at x + t·d is inside
/// the model's domain and its objective is not lower (within 10⁻¹² relative); at most `iterations` steps, ending
/// when no step is accepted or the accepted step's largest component is below 10⁻⁹. The objective never
/// decreases, which is what EM's monotonicity needs of an M-step.
enum FisherScoring {
    /// - Parameters:
    ///   - start: the starting state (an item).
    ///   - objective: the value to maximise at a state.
    ///   - direction: the state's working parameters x and the step d = F⁻¹g (zero where a parameter is held).
    ///   - candidate: the state at working parameters y (projected into bounds), or nil outside the domain.
    @inline(__always)
    static func maximize<State>(
        _ start: State, iterations: Int = 25, objective: (State) -> Double,
        direction: (State) -> (x: [Double], step: [Double]), candidate: ([Double]) -> State?
    ) -> State {
        var current = start, value = objective(start)
        for _ in 0..<iterations {
            let (x, step) = direction(current)
            var t = 1.0, accepted = false
            for _ in 0..<40 {
                var y = x
                for a in y.indices { y[a] += t * step[a] }
                if let next = candidate(y) {
                    let v = objective(next)
                    if v >= value - 1e-12 * abs(value) {
                        current = next
                        value = v
                        accepted = true
                        break
                    }
                }
                t /= 2
            }
            let size = step.reduce(0) { max($0, abs($1)) } * t
            if !accepted || size < 1e-9 { break }
        }
        return current
    }
}
