package apierr

import (
	"errors"
	"fmt"
	"net/http"
)

// Code is an Azure error code, spelled exactly as in x-ms-error-code.
type Code string

// Table service and common error codes.
const (
	// Table service codes.
	DuplicatePropertiesSpecified            Code = "DuplicatePropertiesSpecified"
	EntityAlreadyExists                     Code = "EntityAlreadyExists"
	EntityTooLarge                          Code = "EntityTooLarge"
	HostInformationNotPresent               Code = "HostInformationNotPresent"
	InvalidDuplicateRow                     Code = "InvalidDuplicateRow"
	InvalidValueType                        Code = "InvalidValueType"
	JSONFormatNotSupported                  Code = "JsonFormatNotSupported"
	AtomFormatNotSupported                  Code = "AtomFormatNotSupported"
	MethodNotAllowed                        Code = "MethodNotAllowed"
	NotImplemented                          Code = "NotImplemented"
	PropertiesNeedValue                     Code = "PropertiesNeedValue"
	PropertyNameInvalid                     Code = "PropertyNameInvalid"
	PropertyNameTooLong                     Code = "PropertyNameTooLong"
	PropertyValueTooLarge                   Code = "PropertyValueTooLarge"
	TableAlreadyExists                      Code = "TableAlreadyExists"
	TableBeingDeleted                       Code = "TableBeingDeleted"
	TableNotFound                           Code = "TableNotFound"
	TooManyProperties                       Code = "TooManyProperties"
	UpdateConditionNotSatisfied             Code = "UpdateConditionNotSatisfied"
	XMethodIncorrectCount                   Code = "XMethodIncorrectCount"
	XMethodIncorrectValue                   Code = "XMethodIncorrectValue"
	XMethodNotUsingPost                     Code = "XMethodNotUsingPost"
	CommandsInBatchActOnDifferentPartitions Code = "CommandsInBatchActOnDifferentPartitions"
	KeyValueTooLarge                        Code = "KeyValueTooLarge"
	PrimaryKeyPropertyIsInvalidType         Code = "PrimaryKeyPropertyIsInvalidType"

	// Common codes.
	AuthenticationFailed              Code = "AuthenticationFailed"
	AuthorizationFailure              Code = "AuthorizationFailure"
	AuthorizationPermissionMismatch   Code = "AuthorizationPermissionMismatch"
	AuthorizationProtocolMismatch     Code = "AuthorizationProtocolMismatch"
	AuthorizationResourceTypeMismatch Code = "AuthorizationResourceTypeMismatch"
	AuthorizationServiceMismatch      Code = "AuthorizationServiceMismatch"
	AuthorizationSourceIPMismatch     Code = "AuthorizationSourceIPMismatch"
	ConditionHeadersNotSupported      Code = "ConditionHeadersNotSupported"
	InternalError                     Code = "InternalError"
	InsufficientAccountPermissions    Code = "InsufficientAccountPermissions"
	InvalidAuthenticationInfo         Code = "InvalidAuthenticationInfo"
	NoAuthenticationInformation       Code = "NoAuthenticationInformation"
	InvalidHeaderValue                Code = "InvalidHeaderValue"
	InvalidHTTPVerb                   Code = "InvalidHttpVerb"
	InvalidInput                      Code = "InvalidInput"
	InvalidQueryParameterValue        Code = "InvalidQueryParameterValue"
	InvalidResourceName               Code = "InvalidResourceName"
	InvalidURI                        Code = "InvalidUri"
	InvalidXMLDocument                Code = "InvalidXmlDocument"
	MissingRequiredHeader             Code = "MissingRequiredHeader"
	OutOfRangeInput                   Code = "OutOfRangeInput"
	OutOfRangeQueryParameterValue     Code = "OutOfRangeQueryParameterValue"
	RequestBodyTooLarge               Code = "RequestBodyTooLarge"
	ResourceNotFound                  Code = "ResourceNotFound"
	ServerBusy                        Code = "ServerBusy"
	UnsupportedHTTPVerb               Code = "UnsupportedHttpVerb"
	UnsupportedQueryParameter         Code = "UnsupportedQueryParameter"
	CORSPreflightFailure              Code = "CorsPreflightFailure"
	InvalidVersionForSAS              Code = "InvalidVersionForSas"
	ServiceUnavailable                Code = "ServiceUnavailable"
	RequestTimeout                    Code = "OperationTimedOut"
	InvalidMetadataFormat             Code = "InvalidMetadata"
	Md5Mismatch                       Code = "Md5Mismatch"
	UnsupportedHeader                 Code = "UnsupportedHeader"
	InvalidRange                      Code = "InvalidRange"
)

type entry struct {
	status  int
	message string
}

// table gives every code its status and default message. A test walks it.
var table = map[Code]entry{
	DuplicatePropertiesSpecified:            {http.StatusBadRequest, "A property is specified more than one time."},
	EntityAlreadyExists:                     {http.StatusConflict, "The specified entity already exists."},
	EntityTooLarge:                          {http.StatusBadRequest, "The entity is larger than the maximum size permitted."},
	HostInformationNotPresent:               {http.StatusBadRequest, "The required host information is not present in the request."},
	InvalidDuplicateRow:                     {http.StatusBadRequest, "The batch request contains multiple changes with same row key. An entity can appear only once in a batch request."},
	InvalidValueType:                        {http.StatusBadRequest, "The value specified is invalid."},
	JSONFormatNotSupported:                  {http.StatusUnsupportedMediaType, "JSON format is not supported."},
	AtomFormatNotSupported:                  {http.StatusUnsupportedMediaType, "Atom format is not supported."},
	MethodNotAllowed:                        {http.StatusMethodNotAllowed, "The requested method is not allowed on the specified resource."},
	NotImplemented:                          {http.StatusNotImplemented, "The requested operation is not implemented on the specified resource."},
	PropertiesNeedValue:                     {http.StatusBadRequest, "Values have not been specified for all properties in the entity."},
	PropertyNameInvalid:                     {http.StatusBadRequest, "The property name is invalid."},
	PropertyNameTooLong:                     {http.StatusBadRequest, "The property name exceeds the maximum allowed length."},
	PropertyValueTooLarge:                   {http.StatusBadRequest, "The property value is larger than the maximum size permitted."},
	TableAlreadyExists:                      {http.StatusConflict, "The table specified already exists."},
	TableBeingDeleted:                       {http.StatusConflict, "The specified table is being deleted. Try operation later."},
	TableNotFound:                           {http.StatusNotFound, "The table specified does not exist."},
	TooManyProperties:                       {http.StatusBadRequest, "The entity contains more properties than allowed."},
	UpdateConditionNotSatisfied:             {http.StatusPreconditionFailed, "The update condition specified in the request was not satisfied."},
	XMethodIncorrectCount:                   {http.StatusBadRequest, "More than one X-HTTP-Method is specified."},
	XMethodIncorrectValue:                   {http.StatusBadRequest, "The specified X-HTTP-Method is invalid."},
	XMethodNotUsingPost:                     {http.StatusBadRequest, "The request uses X-HTTP-Method with an HTTP verb other than POST."},
	CommandsInBatchActOnDifferentPartitions: {http.StatusBadRequest, "All commands in a batch must operate on same entity group."},
	KeyValueTooLarge:                        {http.StatusBadRequest, "The size of the PartitionKey or RowKey value is larger than the maximum permitted."},
	PrimaryKeyPropertyIsInvalidType:         {http.StatusBadRequest, "The value specified for PartitionKey or RowKey is not of type string."},

	AuthenticationFailed:              {http.StatusForbidden, "Server failed to authenticate the request. Make sure the value of the Authorization header is formed correctly including the signature."},
	AuthorizationFailure:              {http.StatusForbidden, "This request is not authorized to perform this operation."},
	AuthorizationPermissionMismatch:   {http.StatusForbidden, "This request is not authorized to perform this operation using this permission."},
	AuthorizationProtocolMismatch:     {http.StatusForbidden, "This request is not authorized to perform this operation using this protocol."},
	AuthorizationResourceTypeMismatch: {http.StatusForbidden, "This request is not authorized to perform this operation using this resource type."},
	AuthorizationServiceMismatch:      {http.StatusForbidden, "This request is not authorized to perform this operation using this service."},
	AuthorizationSourceIPMismatch:     {http.StatusForbidden, "This request is not authorized to perform this operation using this source IP."},
	ConditionHeadersNotSupported:      {http.StatusBadRequest, "Condition headers are not supported."},
	InternalError:                     {http.StatusInternalServerError, "The server encountered an internal error. Please retry the request."},
	InsufficientAccountPermissions:    {http.StatusForbidden, "The account being accessed does not have sufficient permissions to execute this operation."},
	InvalidAuthenticationInfo:         {http.StatusBadRequest, "The authentication information was not provided in the correct format. Verify the value of Authorization header."},
	NoAuthenticationInformation:       {http.StatusUnauthorized, "Server failed to authenticate the request. Please refer to the information in the www-authenticate header."},
	InvalidHeaderValue:                {http.StatusBadRequest, "The value for one of the HTTP headers is not in the correct format."},
	InvalidHTTPVerb:                   {http.StatusBadRequest, "The HTTP verb specified is invalid - it is not recognized by the server."},
	InvalidInput:                      {http.StatusBadRequest, "One of the request inputs is not valid."},
	InvalidQueryParameterValue:        {http.StatusBadRequest, "An invalid value was specified for one of the query parameters in the request URI."},
	InvalidResourceName:               {http.StatusBadRequest, "The specifed resource name contains invalid characters."},
	InvalidURI:                        {http.StatusBadRequest, "The requested URI does not represent any resource on the server."},
	InvalidXMLDocument:                {http.StatusBadRequest, "The XML specified is not syntactically valid."},
	MissingRequiredHeader:             {http.StatusBadRequest, "A required HTTP header was not specified."},
	OutOfRangeInput:                   {http.StatusBadRequest, "One of the request inputs is out of range."},
	OutOfRangeQueryParameterValue:     {http.StatusBadRequest, "One of the query parameters specified in the request URI is outside the permissible range."},
	RequestBodyTooLarge:               {http.StatusRequestEntityTooLarge, "The request body is too large and exceeds the maximum permissible limit."},
	ResourceNotFound:                  {http.StatusNotFound, "The specified resource does not exist."},
	ServerBusy:                        {http.StatusServiceUnavailable, "The server is currently unable to receive requests. Please retry your request."},
	UnsupportedHTTPVerb:               {http.StatusMethodNotAllowed, "The resource doesn't support the specified HTTP verb."},
	UnsupportedQueryParameter:         {http.StatusBadRequest, "One of the query parameters specified in the request URI is not supported."},
	CORSPreflightFailure:              {http.StatusForbidden, "CORS not enabled or no matching rule found for this request."},
	InvalidVersionForSAS:              {http.StatusForbidden, "The value for the sv parameter in the shared access signature is not supported."},
	ServiceUnavailable:                {http.StatusServiceUnavailable, "The server is currently unable to receive requests. Please retry your request."},
	RequestTimeout:                    {http.StatusInternalServerError, "The operation could not be completed within the permitted time."},
	InvalidMetadataFormat:             {http.StatusBadRequest, "The metadata specified is invalid."},
	Md5Mismatch:                       {http.StatusBadRequest, "The MD5 value specified in the request did not match with the MD5 value calculated by the server."},
	UnsupportedHeader:                 {http.StatusBadRequest, "One of the HTTP headers specified in the request is not supported."},
	InvalidRange:                      {http.StatusRequestedRangeNotSatisfiable, "The range specified is invalid for the current size of the resource."},
}

// Status returns the HTTP status of the code, or 500 for an unknown code.
func (c Code) Status() int {
	if e, ok := table[c]; ok {
		return e.status
	}
	return http.StatusInternalServerError
}

// Message returns the code's default message.
func (c Code) Message() string { return table[c].message }

// Error is a protocol error: an Azure code with a message. The message
// defaults to the code's own. Status overrides the code's status when not 0
// (Azure answers some codes with more than one status).
type Error struct {
	Code    Code
	Message string
	Status  int
	// Detail, when set, is added to the message as "Detail" lines would be;
	// it names the offending input for the developer.
	Detail string
	// Err is an underlying cause, logged but never sent to the client.
	Err error
	// Challenge, when set, is sent as the WWW-Authenticate header: Azure
	// answers a refused bearer token with "Bearer authorization_uri=...
	// resource_id=...".
	Challenge string
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Code.Message()
	}
	if e.Detail != "" {
		msg += " " + e.Detail
	}
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, msg, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// HTTPStatus is the status to answer with.
func (e *Error) HTTPStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	return e.Code.Status()
}

// Text is the message the client sees, before RequestId and Time are added.
func (e *Error) Text() string {
	msg := e.Message
	if msg == "" {
		msg = e.Code.Message()
	}
	if e.Detail != "" {
		msg += "\n" + e.Detail
	}
	return msg
}

// New returns an Error with the code's default message.
func New(code Code) *Error { return &Error{Code: code} }

// Newf returns an Error with a formatted detail added to the default message.
func Newf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// Wrap returns an Error with code that keeps err as its (unsent) cause.
func Wrap(code Code, err error) *Error { return &Error{Code: code, Err: err} }

// As extracts an *Error from err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Codes lists every known code, for tests.
func Codes() []Code {
	out := make([]Code, 0, len(table))
	for c := range table {
		out = append(out, c)
	}
	return out
}
