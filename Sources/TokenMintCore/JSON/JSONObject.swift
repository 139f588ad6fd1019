/// A JSON object: members in source (or insertion) order, names unique.
///
/// Names are compared exactly, code unit by code unit as RFC 8259 §8.3
/// describes, so `"é"` (U+00E9) and `"e\u{301}"` are two different names.
/// Lookups are linear, which is fastest for the small objects JOSE uses.
///
/// Equality (`==`) compares members in order: `{"a":1,"b":2}` and
/// `{"b":2,"a":1}` are different `JSONObject`s, as they are different bytes
/// once encoded.
public struct JSONObject: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// One member of an object.
    public struct Member: Hashable, Sendable {
        /// The member name.
        public let name: String
        /// The member value.
        public let value: JSONValue

        /// A member named `name` with `value`.
        public init(name: String, value: JSONValue) {
            self.name = name
            self.value = value
        }
    }

    /// The members, in order.
    public private(set) var members: [Member]

    /// An empty object.
    public init() {
        members = []
    }

    /// An object with `members`, in order.
    ///
    /// Never traps: when a name repeats, the later value replaces the earlier
    /// one, which keeps its original position (as ``set(_:_:)`` does).
    public init(_ members: [(String, JSONValue)]) {
        self.members = []
        self.members.reserveCapacity(members.count)
        for (name, value) in members {
            set(name, value)
        }
    }

    /// An object from a dictionary literal, members in literal order; a
    /// repeated name replaces the earlier value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    /// An object whose member names are already known to be unique (the parser
    /// checks them as it reads).
    package init(uniqueMembers: [Member]) {
        members = uniqueMembers
    }

    /// The number of members.
    public var count: Int { members.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { members.isEmpty }

    /// The member names, in order.
    public var names: [String] { members.map(\.name) }

    /// The value of the member `name`, or nil when there is none.
    public subscript(name: String) -> JSONValue? {
        for member in members where JSONObject.sameName(member.name, name) {
            return member.value
        }
        return nil
    }

    /// Sets the member `name` to `value`: replaced in place when the name is
    /// present, appended otherwise.
    public mutating func set(_ name: String, _ value: JSONValue) {
        let member = Member(name: name, value: value)
        if let index = members.firstIndex(where: { JSONObject.sameName($0.name, name) }) {
            members[index] = member
        } else {
            members.append(member)
        }
    }

    /// Removes the member `name`, if present, and returns its value.
    @discardableResult
    public mutating func remove(_ name: String) -> JSONValue? {
        guard let index = members.firstIndex(where: { JSONObject.sameName($0.name, name) }) else { return nil }
        return members.remove(at: index).value
    }

    /// An iterator over the members, in order.
    public func makeIterator() -> IndexingIterator<[Member]> {
        members.makeIterator()
    }

    /// The number of members.
    public var underestimatedCount: Int { members.count }

    /// Whether two member names are the same code unit for code unit (unlike
    /// `String.==`, which treats canonically equivalent strings as equal).
    static func sameName(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a
        var b = b
        return a.withUTF8 { x in b.withUTF8 { y in x.elementsEqual(y) } }
    }
}
