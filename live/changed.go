package live

// Changed returns a channel that receives a signal at each change of the
// operation published here (a commit of this process, or one the tailer
// learned of), and the function that stops it: a mutation waiting for its
// command's outcome (service.Changes). The signal never waits: one not
// yet taken stands for any that follow it.
func (b *Broker) Changed(org, opID string) (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	s := b.operationFunc(operationKey(org, opID), func(m *Message) bool {
		select {
		case c <- struct{}{}:
		default:
		}
		return m != nil
	})
	return c, s.Close
}
