import Foundation

/// An EM engine that gives the gradient of the log posterior in its working parameters from an E-step at those
/// parameters (Fisher's identity: the expected complete-data score equals the observed score, Louis 1982).
protocol FisherIdentityGradient: EMIterable {
    func gradient(_ e: Expectation) -> [Double]
}

extension FisherIdentityGradient {
    /// The observed information −∂² log posterior/∂x∂xᵀ at the current working parameters by Oakes' (1999)
    /// identity, as mirt's default `SE.type = "Oakes"`: the Hessian is the Jacobian of the gradient
    /// x ↦ Σ_j ∇Q_j(x | E-step at x), taken by central differences (step 10⁻⁵·max(1, |x_k|), two E-steps per
    /// parameter), then symmetrised. P × P, row-major. `progress` is told each parameter done.
    func observedInformation(progress: ((Int, Int) -> Void)? = nil) -> [Double] {
        let x = workingParameters(), p = x.count
        var hessian = [Double](repeating: 0, count: p * p)
        for k in 0..<p {
            let h = 1e-5 * max(1, abs(x[k]))
            var up = self, down = self
            var xu = x, xd = x
            xu[k] += h
            xd[k] -= h
            up.setWorkingParameters(xu)
            down.setWorkingParameters(xd)
            let gu = up.gradient(up.eStep()), gd = down.gradient(down.eStep())
            for a in 0..<p { hessian[a * p + k] = (gu[a] - gd[a]) / (2 * h) }
            progress?(k + 1, p)
        }
        var information = [Double](repeating: 0, count: p * p)
        for a in 0..<p { for b in 0..<p { information[a * p + b] = -0.5 * (hessian[a * p + b] + hessian[b * p + a]) } }
        return information
    }

    /// The covariance of the working parameters from `observedInformation`, for a fit with `standardErrors`: nil
    /// with a warning when there are more than `maximumParameters` (two E-steps each) or the information is not
    /// positive definite; nil without one when standard errors are not asked for. `progress` is told each
    /// parameter done, as the `.standardErrors` phase of the run that ended at `cycle` with `logLikelihood`.
    func oakesCovariance(
        standardErrors: Bool, maximumParameters: Int, cycle: Int, logLikelihood: Double, started: UInt64, workers: Int,
        progress: ((CalibrationProgress) -> Void)?, warnings: inout [String]
    ) -> ParameterCovariance? {
        guard standardErrors else { return nil }
        let count = workingParameters().count
        guard count <= maximumParameters else {
            warnings.append(
                "standard errors not computed: \(count) free parameters, more than the \(maximumParameters) the observed information is formed for (two E-steps each)"
            )
            return nil
        }
        let information = observedInformation { done, total in
            progress?(
                CalibrationProgress(
                    phase: .standardErrors, cycle: cycle, logLikelihood: logLikelihood, largestChange: Double(done) / Double(total),
                    elapsedSeconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9))
        }
        let covariance = ParameterCovariance(information: information, count: count, held: [], workers: workers)
        if covariance == nil { warnings.append(ParameterCovariance.notPositiveDefiniteWarning) }
        return covariance
    }
}
