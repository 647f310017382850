module github.com/shexec/shexec-go/bench/peer

go 1.19

require github.com/shexec/shexec-go v0.0.0

replace github.com/shexec/shexec-go => ../../../examples/go
