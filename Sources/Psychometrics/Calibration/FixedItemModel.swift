import Foundation

/// An item held at its bank values in a calibration (online, fixed-parameter calibration): any
/// `ItemResponseModel` (a 0/1 item of any logistic model, the 3PL included, or an item in several categories)
/// as a `CalibratableItemModel` with no working parameters, so that `ItemModelEngine` counts its responses in
/// every person's posterior, estimates nothing of it, and gives it no rows in the information.
struct FixedItemModel: CalibratableItemModel {
    let model: any ItemResponseModel

    var categoryCount: Int { model.categoryCount }
    var parameterNames: [String] { model.parameterNames }
    var parameterValues: [Double] { model.parameterValues }
    var categoriesAreScores: Bool { model.categoriesAreScores }
    func points(category k: Int) -> Int { model.points(category: k) }
    var maximumScore: Int { model.maximumScore }

    func logCategoryProbabilities(at theta: Double, into logProbabilities: UnsafeMutableBufferPointer<Double>) {
        model.logCategoryProbabilities(at: theta, into: logProbabilities)
    }

    func categoryThetaDerivatives(
        at theta: Double, probability: UnsafeMutableBufferPointer<Double>,
        first: UnsafeMutableBufferPointer<Double>, second: UnsafeMutableBufferPointer<Double>
    ) {
        model.categoryThetaDerivatives(at: theta, probability: probability, first: first, second: second)
    }

    var workingParameters: [Double] { [] }
    func withWorkingParameters(_ x: [Double]) -> FixedItemModel? { x.isEmpty ? self : nil }
    func workingLogGradient(at theta: Double, into gradient: UnsafeMutableBufferPointer<Double>) {}
}
