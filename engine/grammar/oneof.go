package grammar

// oneOf needs branches that no value can match twice.

// disjoint reports whether no JSON value can match both a and b, by their
// types or by a shared required property with distinct literal values.
func disjoint(a, b *node) bool {
	ka, kb := baseKinds(a), baseKinds(b)
	if ka&kb == 0 {
		return true
	}
	if a.kind == kLiteral && b.kind == kLiteral {
		return !a.lit.overlaps(b.lit)
	}
	if a.kind == kObject && b.kind == kObject {
		for i, pa := range a.props {
			if a.required&(1<<uint(i)) == 0 || pa.n.kind != kLiteral {
				continue
			}
			for j, pb := range b.props {
				if pb.name == pa.name && b.required&(1<<uint(j)) != 0 && pb.n.kind == kLiteral && !pa.n.lit.overlaps(pb.n.lit) {
					return true
				}
			}
		}
	}
	return false
}

// baseKinds is a bit set of the JSON types a node can produce (literals
// by their first byte).
func baseKinds(n *node) uint {
	switch n.kind {
	case kString:
		return 1
	case kNumber:
		return 2
	case kArray:
		return 4
	case kObject:
		return 8
	case kLiteral:
		var k uint
		for b := range n.lit.nodes[0].next {
			switch {
			case b == '"':
				k |= 1
			case b == '-' || (b >= '0' && b <= '9'):
				k |= 2
			case b == '[':
				k |= 4
			case b == '{':
				k |= 8
			default:
				k |= 16 // true, false, null: compared as literals
			}
		}
		return k
	case kAnyOf:
		var k uint
		for _, a := range n.alts {
			k |= baseKinds(a)
		}
		return k
	}
	return 0
}
