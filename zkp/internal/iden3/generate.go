package iden3

//go:generate go run gen/main.go
