import Foundation
import Psychometrics

/// One response file per group (`calibrate`/`dif --group-file GROUP=PATH`): each file read as `ResponseMatrix.load`
/// reads one, then the files joined into one matrix whose persons are the files' in order and whose items are the
/// union of theirs by id (the first file's in its order, then each later file's new items in theirs), so groups may
/// see different items (missing by design). Each person's label is its file's group.
///
/// Checked: at least two files, group names non-empty, at most `PersonGroups.maximumLabelBytes` bytes, distinct; a
/// person id in two files (a session in two groups) is an error naming both files; an item scored in more
/// categories in one file than another keeps the largest count (its responses are category indices either way).
package enum GroupFiles {
    /// A group name and its file from `GROUP=PATH` (split at the first `=`), or why the text is not one.
    package static func parse(_ text: String) -> Result<(group: String, path: String), Problem> {
        guard let equals = text.firstIndex(of: "=") else { return .failure(Problem("takes GROUP=PATH, got \(TextFidelity.quoted(text))")) }
        let group = String(text[..<equals]).trimmingCharacters(in: .whitespaces), path = String(text[text.index(after: equals)...])
        guard !group.isEmpty, !path.isEmpty else {
            return .failure(Problem("takes GROUP=PATH with both parts non-empty, got \(TextFidelity.quoted(text))"))
        }
        guard group.utf8.count <= PersonGroups.maximumLabelBytes else {
            return .failure(Problem("the group name \(TextFidelity.quoted(group)) is longer than \(PersonGroups.maximumLabelBytes) bytes"))
        }
        return .success((group, path))
    }

    /// What is wrong with a `--group-file` list, phrased after the option's name.
    package struct Problem: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }

    /// The parsed list, checked: at least two files, no group twice, at most `PersonGroups.maximumGroups`.
    package static func parse(_ texts: [String]) -> Result<[(group: String, path: String)], Problem> {
        var out: [(group: String, path: String)] = [], seen = Set<String>()
        for text in texts {
            switch parse(text) {
            case .failure(let problem): return .failure(problem)
            case .success(let file):
                guard seen.insert(file.group).inserted else { return .failure(Problem("group \(TextFidelity.quoted(file.group)) is given twice")) }
                out.append(file)
            }
        }
        guard out.count >= 2 else { return .failure(Problem("needs one file per group, at least two groups; got \(out.count)")) }
        guard out.count <= PersonGroups.maximumGroups else {
            return .failure(Problem("at most \(PersonGroups.maximumGroups) groups, got \(out.count)"))
        }
        return .success(out)
    }

    /// The joined matrix, each person's group, and each file's read report (in `files`' order).
    /// - Parameter files: as `parse` returns them (two or more, distinct groups).
    /// - Throws: `InputError` for a person in two files; the readers' errors for each file.
    package static func load(_ files: [(group: String, path: String)], options: ResponseFileOptions, maxMemoryBytes: Int?, threads: Int) throws
        -> (matrix: ResponseMatrix, groups: [String], reports: [ResponseFileReport])
    {
        precondition(files.count >= 2 && Set(files.map(\.group)).count == files.count, "two or more files with distinct groups (parse checks them)")
        var itemIDs: [String] = [], itemIndex: [String: Int32] = [:], categories: [Int] = []
        var personIDs: [String] = [], offsets = [0], cells: [Int32] = [], values: [UInt8] = [], labels: [String] = [],
            reports: [ResponseFileReport] = []
        var fileOfPerson: [String: String] = [:]
        for file in files {
            let (matrix, report) = try ResponseMatrix.load(csv: file.path, options: options, maxMemoryBytes: maxMemoryBytes, threads: threads)
            reports.append(report)
            // This file's item numbering in the joined matrix.
            let renumbered = matrix.itemIDs.indices.map { j -> Int32 in
                let id = matrix.itemIDs[j]
                if let k = itemIndex[id] {
                    categories[Int(k)] = max(categories[Int(k)], matrix.categoryCounts[j])
                    return k
                }
                let k = Int32(itemIDs.count)
                itemIndex[id] = k
                itemIDs.append(id)
                categories.append(matrix.categoryCounts[j])
                return k
            }
            var row: [(Int32, UInt8)] = []
            for i in 0..<matrix.personCount {
                let id = matrix.personIDs[i]
                if let other = fileOfPerson[id] {
                    throw InputError(
                        file: file.path, message: "person \(TextFidelity.quoted(id)) is also in \(other): each person belongs to one group's file")
                }
                fileOfPerson[id] = file.path
                row.removeAll(keepingCapacity: true)
                for c in matrix.cells(ofPerson: i) { row.append((renumbered[Int(matrix.itemIndices[c])], matrix.responses[c])) }
                row.sort { $0.0 < $1.0 }
                for (k, u) in row { cells.append(k); values.append(u) }
                personIDs.append(id)
                offsets.append(cells.count)
                labels.append(file.group)
            }
        }
        let matrix = try ResponseMatrix(
            personIDs: personIDs, itemIDs: itemIDs, rowOffsets: offsets, itemIndices: cells, responses: values,
            categoryCounts: categories)
        return (matrix, labels, reports)
    }
}
