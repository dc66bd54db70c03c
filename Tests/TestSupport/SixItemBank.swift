/// The six-item bank (2PL and one 3PL item, two items in each of three domains) that the library's and the command
/// line's batch-scoring tests both score, so that their expected figures are of the same bank.
package enum SixItemBank {
    package static let itemIDs = ["q1", "q2", "q3", "q4", "q5", "q6"]
    package static let domains = ["logic", "pattern", "spatial"]

    package static let csv = """
        item_id,model,a,b,c,domain
        q1,2pl,1.2,-1.0,0,logic
        q2,2pl,0.8,-0.5,0,logic
        q3,2pl,1.5,0.0,0,pattern
        q4,2pl,1.0,0.5,0,pattern
        q5,3pl,1.3,1.0,0.2,spatial
        q6,2pl,0.9,1.5,0,spatial

        """
}
