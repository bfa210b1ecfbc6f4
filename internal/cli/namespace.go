package cli

import (
	"fmt"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// checkNamespace refuses a name that no namespace can have, in the API
// server's words when it refuses to create one ("a lowercase RFC 1123 label
// must consist of ..."): watched, it would be a namespace "not found" for
// ever, never one that is not created yet. what names where the name came
// from ("namespace" for -n, "--probe namespace").
func checkNamespace(what, ns string) error {
	if errs := apivalidation.ValidateNamespaceName(ns, false); len(errs) > 0 {
		return fmt.Errorf("invalid %s %q: %s", what, ns, strings.Join(errs, "; "))
	}
	return nil
}

// validateNamespaceFlag checks -n (--namespace), when given: a name no
// namespace can have is a usage error, before contacting the server.
func validateNamespaceFlag(flags *genericclioptions.ConfigFlags) error {
	if flags.Namespace == nil || *flags.Namespace == "" {
		return nil
	}
	if err := checkNamespace("namespace", *flags.Namespace); err != nil {
		return usageError{err}
	}
	return nil
}
