/// Whether `given` equals the secret `expected`, compared without an early exit: the time taken depends only on the
/// secret's length, never on how much of it matched or on the length of the guess. For the V1 shared secret and
/// the ingress's path token.
package func constantTimeEquals(_ given: some StringProtocol, _ expected: String) -> Bool {
    let given = Array(given.utf8)
    let expected = Array(expected.utf8)
    var difference = given.count ^ expected.count
    for index in expected.indices {
        difference |= Int(expected[index] ^ (index < given.count ? given[index] : 0))
    }
    return difference == 0
}
