import Foundation
import Psychometrics
import Testing

/// Common-item linking with items scored in more than two categories (Kim & Lee 2006): graded, gpcm, pcm and
/// nominal common items beside 0/1 ones, the constants recovered exactly when the new bank is the old one on
/// another scale, and the transformation carrying every model to the old scale.
@Suite("Scale linking with graded, partial-credit and nominal items")
struct PolytomousLinkingTests {
    static let slope = 1.3, intercept = -0.4

    /// Old-scale items: two 3PL, two graded, a gpcm, a nominal.
    static func oldBank() throws -> ItemBank {
        var items = [
            BankItem(itemID: "q1", model: .threePL, parameters: ItemParameters(discrimination: 1.2, difficulty: -0.5, guessing: 0.2)),
            BankItem(itemID: "q2", model: .twoPL, parameters: ItemParameters(discrimination: 0.9, difficulty: 0.8))
        ]
        for (id, kind, values) in [
            ("g1", ItemModelKind.graded, [1.4, -1.2, 0.1, 1.3]), ("g2", .graded, [0.8, -0.6, 0.9]),
            ("p1", .generalizedPartialCredit, [1.1, -0.3, 0.4, -0.2]),
            ("n1", .nominal, [0, 0.6, 1.5, 0, 0.8, -0.4])
        ] {
            var item = BankItem(itemID: id, model: .twoPL, parameters: ItemParameters(discrimination: 1, difficulty: 0))
            item.categoryModel = try CategoryBankItem(kind: kind, values: values)
            items.append(item)
        }
        return ItemBank(items: items)
    }

    /// The same items on a scale with θ_old = slope·θ_new + intercept: every probability unchanged.
    static func newBank(_ old: ItemBank) throws -> ItemBank {
        let inverse = try ScaleTransformation(slope: 1 / slope, intercept: -intercept / slope)
        return inverse.bank(old)
    }

    @Test("every curve method recovers (1.3, −0.4) to 1e-8 with graded, gpcm and nominal common items; moment methods without the nominal one")
    func exactRecovery() throws {
        let old = try Self.oldBank(), new = try Self.newBank(old)
        // The carried items give the old probabilities back (the transformation is exact).
        for (a, b) in zip(old.items, try ScaleTransformation(slope: Self.slope, intercept: Self.intercept).bank(new).items) {
            for theta in [-2.0, 0.3, 1.7] {
                for (x, y) in zip(a.responseModel.categoryProbabilities(at: theta), b.responseModel.categoryProbabilities(at: theta)) {
                    #expect(abs(x - y) < 1e-12, "\(a.itemID)")
                }
            }
        }
        for direction in LinkingDirection.allCases {
            var options = ScaleLinkingOptions(method: .haebara)
            options.direction = direction
            let fit = try ScaleLinking.link(old: old, new: new, options: options)
            #expect(
                abs(fit.slope - Self.slope) < 1e-8 && abs(fit.intercept - Self.intercept) < 1e-8,
                "haebara \(direction): \(fit.slope), \(fit.intercept)")
            #expect(fit.converged && fit.criterion! < 1e-15)
        }
        // Without the nominal item: Stocking–Lord and the moment methods (each threshold a difficulty).
        let oldScored = ItemBank(items: old.items.filter { $0.itemID != "n1" }), newScored = ItemBank(items: new.items.filter { $0.itemID != "n1" })
        for method in [LinkingMethod.stockingLord, .meanSigma, .meanMean] {
            let fit = try ScaleLinking.link(old: oldScored, new: newScored, options: ScaleLinkingOptions(method: method))
            #expect(abs(fit.slope - Self.slope) < 1e-8 && abs(fit.intercept - Self.intercept) < 1e-8, "\(method): \(fit.slope), \(fit.intercept)")
        }
        // The linked new bank: graded a/A and A·b + B, the pcm case becoming gpcm when A ≠ 1.
        let linked = try ScaleLinking.link(old: old, new: new, options: ScaleLinkingOptions(method: .haebara)).linkedBank(new)
        for (a, b) in zip(old.items, linked.items) {
            for (x, y) in zip(a.responseModel.parameterValues, b.responseModel.parameterValues) {
                #expect(abs(x - y) < 1e-7, "\(a.itemID): \(x) vs \(y)")
            }
        }
    }

    @Test("refusals name the item: a nominal item for Stocking–Lord or mean-sigma; a model that differs between the banks")
    func refusals() throws {
        let old = try Self.oldBank(), new = try Self.newBank(old)
        for method in [LinkingMethod.stockingLord, .meanSigma] {
            #expect(throws: PsychometricsError.self) { try ScaleLinking.link(old: old, new: new, options: ScaleLinkingOptions(method: method)) }
            do { _ = try ScaleLinking.link(old: old, new: new, options: ScaleLinkingOptions(method: method)) } catch {
                #expect(error.message.contains("common item 'n1' is a nominal item"), "\(error.message)")
            }
        }
        var changed = new
        changed.items[2].categoryModel = try CategoryBankItem(kind: .generalizedPartialCredit, values: changed.items[2].categoryModel!.values)
        do { _ = try ScaleLinking.link(old: old, new: changed); Issue.record("linked a graded item with a gpcm one") } catch {
            #expect(
                error.message
                    == "common item 'g1' is graded with 4 categories in the old bank and gpcm with 4 in the new one; linking compares an item with itself"
            )
        }
    }

    @Test("a pcm bank linked with slope 1 stays pcm; with another slope its items become gpcm with a = 1/slope")
    func partialCredit() throws {
        let item = try CategoryBankItem(kind: .partialCredit, values: [1, -0.5, 0.7])
        #expect(try ScaleTransformation(slope: 1, intercept: 0.3).categoryItem(item).kind == .partialCredit)
        let moved = try ScaleTransformation(slope: 2, intercept: 0.3).categoryItem(item)
        #expect(moved.kind == .generalizedPartialCredit && moved.values == [0.5, -0.7, 1.7])
    }
}
