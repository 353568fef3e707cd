package testenv

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Files a member's pki folder holds.
const (
	caCertFile      = "ca.crt"
	servingCertFile = "apiserver.crt"
	servingKeyFile  = "apiserver.key"
	saPublicFile    = "sa.pub"
	saPrivateFile   = "sa.key"
)

// adminUser is the client certificate's user; system:masters passes RBAC.
const (
	adminUser  = "propagit-testenv-admin"
	adminGroup = "system:masters"
)

// pki is a member's certificate material. The files are written once and
// reused by every apiserver restart, so a client built before a restart still
// trusts the server and is still trusted by it.
type pki struct {
	dir       string
	caPEM     []byte
	adminCert []byte
	adminKey  []byte
}

// newPKI creates a CA, a serving certificate for 127.0.0.1/localhost, an admin
// client certificate and a service-account signing key in dir.
func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("failed to create pki folder: %w", err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("failed to generate CA key: %w", err)
	}
	caTmpl := certTemplate("propagit-testenv-ca")
	caTmpl.IsCA = true
	caTmpl.BasicConstraintsValid = true
	caTmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("failed to sign CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("failed to parse CA certificate: %w", err)
	}
	p := &pki{dir: dir, caPEM: pemBlock("CERTIFICATE", caDER)}

	serving := certTemplate("kube-apiserver")
	serving.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	serving.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(10, 0, 0, 1)}
	serving.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}
	servingCert, servingKey, err := issue(serving, ca, caKey)
	if err != nil {
		return nil, fmt.Errorf("failed to issue serving certificate: %w", err)
	}

	admin := certTemplate(adminUser)
	admin.Subject.Organization = []string{adminGroup}
	admin.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if p.adminCert, p.adminKey, err = issue(admin, ca, caKey); err != nil {
		return nil, fmt.Errorf("failed to issue admin certificate: %w", err)
	}
	if err := p.writeFiles(servingCert, servingKey); err != nil {
		return nil, err
	}
	return p, nil
}

// writeFiles writes what the binaries read from disk.
func (p *pki) writeFiles(servingCert, servingKey []byte) error {
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("failed to generate service-account key: %w", err)
	}
	saPrivate, err := x509.MarshalPKCS8PrivateKey(saKey)
	if err != nil {
		return fmt.Errorf("failed to encode service-account key: %w", err)
	}
	saPublic, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return fmt.Errorf("failed to encode service-account public key: %w", err)
	}
	files := map[string][]byte{
		caCertFile:      p.caPEM,
		servingCertFile: servingCert,
		servingKeyFile:  servingKey,
		saPrivateFile:   pemBlock("PRIVATE KEY", saPrivate),
		saPublicFile:    pemBlock("PUBLIC KEY", saPublic),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(p.dir, name), data, 0o600); err != nil {
			return fmt.Errorf("failed to write %s: %w", name, err)
		}
	}
	return nil
}

// path returns the path of one of the pki files.
func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

// certTemplate returns a template valid for a day with a random serial.
func certTemplate(cn string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
}

// issue signs tmpl with the CA and returns the PEM certificate and key.
func issue(tmpl, ca *x509.Certificate, caKey crypto.Signer) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", keyDER), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
