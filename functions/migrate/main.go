// Command migrate is the operator's Lambda (docs/ARCHITECTURE.md §14): CloudFormation invokes
// it as the Migration custom resource on every create and update (bootstrap the roles and
// the database, apply the migrations, store the roles' URLs), and `steward remote` invokes it
// with the operator's AWS credentials (migrate, and every operator command:
// internal/operator). It reads its configuration per
// invocation, so that even a malformed setting is an answer to CloudFormation, never an init
// error that would leave the stack waiting.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stewardhq/steward/internal/deployment"
)

func main() {
	lambda.Start(deployment.New(os.Getenv, os.Stderr).Handle)
}
