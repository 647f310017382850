module github.com/shexec/shexec-go

go 1.19
